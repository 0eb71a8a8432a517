import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { readJsonBody } from '../../services/api-operations.ts';
import { sends } from '../../services/tenant-resources.ts';
import type { BatchAccepted, BatchBody } from '../../../shared/schemas/emails.ts';

export default class SendBatch extends SvcCommand<typeof SendBatch> {
  static override operations = ['postEmailsBatch'];
  static override summary = 'Send one message or template to many recipients, each with its own data (a JSON file).';
  static override description =
    'The file is the body of POST /emails/batch: { "slug" | "templateVersionId" | "subject"+"htmlBody", "from", ' +
    '"recipients": [{ "to", "data", "locale" }] }. Rejected recipients are listed; exit 1 when none was accepted.';
  static override examples = [
    '<%= config.bin %> send-batch receipts.json',
    'cat batch.json | <%= config.bin %> send-batch - --json',
  ];
  static override args = { file: Args.string({ description: 'JSON file, or - for stdin', required: true }) };
  static override flags = {
    'idempotency-key': Flags.string({ description: 'same key and body within 24 h returns the first answer' }),
  };

  async run(): Promise<BatchAccepted> {
    const source = this.args.file === '-' ? '-' : `@${this.args.file}`;
    const body = (await readJsonBody(source)) as BatchBody;
    const answer = await sends.batch(this.client, body, this.flags['idempotency-key']);
    this.log(`${answer.accepted.length} accepted, ${answer.rejected.length} rejected.`);
    for (const rejected of answer.rejected) this.log(`  ${JSON.stringify(rejected)}`);
    if (answer.accepted.length === 0) process.exitCode = 1;
    return answer;
  }
}
