import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { describeRecord } from '../../records.ts';
import { readStdin } from '../../services/session.ts';
import { projects, smtpSettings } from '../../services/projects.ts';
import type { Project, UpdateProjectBody } from '../../../shared/schemas/projects.ts';
import { SMTP_FLAGS } from './flags.ts';

export default class ProjectsUpdate extends SvcCommand<typeof ProjectsUpdate> {
  static override operations = ['patchProjectsById'];
  static override summary = 'Rename a project, or change or remove its SMTP relay.';
  static override examples = [
    '<%= config.bin %> projects update 1d2e… --name "Shop EU"',
    '<%= config.bin %> projects update 1d2e… --no-smtp',
  ];
  static override args = { id: Args.string({ description: 'project id', required: true }) };
  static override flags = {
    name: Flags.string({ description: 'new name' }),
    'no-smtp': Flags.boolean({ description: "remove the project's relay (its mail goes through the default)" }),
    ...SMTP_FLAGS,
  };

  async run(): Promise<Project> {
    const pass = this.flags['smtp-pass-stdin'] ? await readStdin() : undefined;
    const changes: UpdateProjectBody = {};
    if (this.flags.name) changes.name = this.flags.name;
    const smtp = smtpSettings(this.flags, pass);
    if (smtp) changes.smtp = smtp;
    if (this.flags['no-smtp']) changes.smtp = null;
    if (Object.keys(changes).length === 0)
      throw new CliFailure('Nothing to change: pass --name, --smtp-host … or --no-smtp.', EXIT.usage, 'MISSING_FLAG');
    const project = await projects.update(this.client, this.args.id, changes);
    this.log(describeRecord(project));
    return project;
  }
}
