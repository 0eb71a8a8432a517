import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { sends } from '../../services/tenant-resources.ts';
import type { SendAnswer } from '../../api-types.ts';

export default class LogsResend extends SvcCommand<typeof LogsResend> {
  static override operations = ['postEmailsLogsByIdResend'];
  static override summary = 'Send a logged e-mail again, as a new send with its own id.';
  static override examples = ['<%= config.bin %> logs resend 0b6c…'];
  static override args = { id: Args.string({ description: 'e-mail log id', required: true }) };

  async run(): Promise<SendAnswer> {
    const answer = await sends.resend(this.client, this.args.id);
    this.log(`Resent as ${answer.id} (${answer.status}).`);
    return answer;
  }
}
