import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRecord } from '../../records.ts';
import { readStdin } from '../../services/session.ts';
import { projects, smtpSettings } from '../../services/projects.ts';
import type { Project } from '../../../shared/schemas/projects.ts';
import { SMTP_FLAGS } from './flags.ts';

export default class ProjectsCreate extends SvcCommand<typeof ProjectsCreate> {
  static override operations = ['postProjects'];
  static override summary = 'Create a project, optionally with its own SMTP relay.';
  static override examples = [
    '<%= config.bin %> projects create Shop',
    'printf %s "$RELAY_PASS" | <%= config.bin %> projects create Shop --smtp-host smtp.example.com --smtp-user shop --smtp-pass-stdin',
  ];
  static override args = { name: Args.string({ description: 'project name', required: true }) };
  static override flags = SMTP_FLAGS;

  async run(): Promise<Project> {
    const pass = this.flags['smtp-pass-stdin'] ? await readStdin() : undefined;
    const smtp = smtpSettings(this.flags, pass);
    const project = await projects.create(this.client, { name: this.args.name, ...(smtp ? { smtp } : {}) });
    this.log(describeRecord(project));
    return project;
  }
}
