import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRecord } from '../../records.ts';
import { projects } from '../../services/projects.ts';
import type { Project } from '../../../shared/schemas/projects.ts';

export default class ProjectsShow extends SvcCommand<typeof ProjectsShow> {
  static override operations = ['getProjectsById'];
  static override summary = 'Show a project (the relay password is never shown, only whether it is set).';
  static override examples = ['<%= config.bin %> projects show 1d2e…'];
  static override args = { id: Args.string({ description: 'project id', required: true }) };

  async run(): Promise<Project> {
    const project = await projects.show(this.client, this.args.id);
    this.log(describeRecord(project));
    return project;
  }
}
