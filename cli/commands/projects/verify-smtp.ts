import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { EXIT } from '../../errors.ts';
import { projects } from '../../services/projects.ts';

export default class ProjectsVerifySmtp extends SvcCommand<typeof ProjectsVerifySmtp> {
  static override operations = ['postProjectsByIdVerifySmtp'];
  static override summary = "Connect to the project's SMTP relay and sign in; exits 1 when that fails.";
  static override examples = ['<%= config.bin %> projects verify-smtp 1d2e…'];
  static override args = { id: Args.string({ description: 'project id', required: true }) };

  async run(): Promise<{ ok: boolean; error?: string }> {
    const result = await projects.verifySmtp(this.client, this.args.id);
    this.log(
      result.ok ? 'The relay accepted the connection and the sign-in.' : `The relay check failed: ${result.error}`,
    );
    if (!result.ok) process.exitCode = EXIT.refused;
    return result;
  }
}
