import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { projects } from '../../services/projects.ts';

export default class ProjectsDelete extends SvcCommand<typeof ProjectsDelete> {
  static override operations = ['deleteProjectsById'];
  static override summary = 'Delete a project.';
  static override examples = ['<%= config.bin %> projects delete 1d2e…'];
  static override args = { id: Args.string({ description: 'project id', required: true }) };

  async run(): Promise<{ id: string; deleted: true }> {
    await projects.remove(this.client, this.args.id);
    this.log(`Deleted project ${this.args.id}.`);
    return { id: this.args.id, deleted: true };
  }
}
