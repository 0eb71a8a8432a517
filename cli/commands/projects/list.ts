import { SvcCommand } from '../../base-command.ts';
import { describeRows } from '../../records.ts';
import { projects } from '../../services/projects.ts';
import type { Project } from '../../../shared/schemas/projects.ts';

export default class ProjectsList extends SvcCommand<typeof ProjectsList> {
  static override operations = ['getProjects'];
  static override summary = "List the tenant's projects and their SMTP relays.";
  static override examples = ['<%= config.bin %> projects list --json'];

  async run(): Promise<Project[]> {
    const answer = await projects.list(this.client);
    this.log(describeRows(answer, ['id', 'name', 'smtp', 'createdAt'], 'No projects: `svc projects create <name>`.'));
    return answer;
  }
}
