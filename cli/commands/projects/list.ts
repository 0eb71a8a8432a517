import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pageLine } from '../../format.ts';
import { describeRows } from '../../records.ts';
import { projects } from '../../services/projects.ts';
import type { PageOf } from '../../../shared/schemas/common.ts';
import type { Project } from '../../../shared/schemas/projects.ts';

export default class ProjectsList extends SvcCommand<typeof ProjectsList> {
  static override operations = ['getProjects'];
  static override summary = "List the tenant's projects and their SMTP relays.";
  static override examples = ['<%= config.bin %> projects list --json'];
  static override flags = {
    page: Flags.integer({ description: 'page number', min: 1 }),
    limit: Flags.integer({ description: 'per page (at most 100)', min: 1, max: 100 }),
  };

  async run(): Promise<PageOf<Project>> {
    const answer = await projects.list(this.client, { page: this.flags.page, limit: this.flags.limit });
    this.log(
      describeRows(answer.data, ['id', 'name', 'smtp', 'createdAt'], 'No projects: `svc projects create <name>`.'),
    );
    this.log(pageLine(answer.meta));
    return answer;
  }
}
