import { Args, Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { keyValue } from '../../format.ts';
import { getMessage, getRawMessage } from '../../services/inbound-routing.ts';
import { attachmentLines, messageFields } from '../../services/inbound-message-view.ts';
import type { InboundMessageDetail } from '../../../shared/schemas/inbound.ts';

export default class InboundShow extends SvcCommand<typeof InboundShow> {
  static override operations = ['getInboundMessagesById', 'getInboundMessagesByIdRaw'];
  static override summary = 'Show one routed message: sender, verdicts, attachments, the reply without its quote.';
  static override description =
    'With --raw: the message exactly as received (message/rfc822), for a file or a mail reader. ' +
    'With --json: the API answer, parsed form included.';
  static override examples = [
    '<%= config.bin %> inbound show 5d3a…',
    '<%= config.bin %> inbound show 5d3a… --full',
    '<%= config.bin %> inbound show 5d3a… --raw > message.eml',
  ];
  static override args = { id: Args.string({ description: 'inbound message id', required: true }) };
  static override flags = {
    raw: Flags.boolean({ description: 'print the raw source instead', exclusive: ['full'] }),
    full: Flags.boolean({ description: 'the whole text body, quoted history included' }),
  };

  async run(): Promise<InboundMessageDetail | { id: string; raw: string }> {
    if (this.flags.raw) {
      const raw = await getRawMessage(this.client, this.args.id);
      if (!this.jsonEnabled()) process.stdout.write(raw);
      return { id: this.args.id, raw: raw.toString('utf8') };
    }
    const message = await getMessage(this.client, this.args.id);
    this.log(keyValue(messageFields(message)));
    const attachments = attachmentLines(message);
    if (attachments.length) this.log(`${chalk.bold('\nAttachments')}\n${attachments.map((l) => `  ${l}`).join('\n')}`);
    const body = this.flags.full ? message.parsed.text : message.parsed.strippedText;
    this.log(`\n${chalk.bold(this.flags.full ? 'Text' : 'Reply (quote and signature cut)')}\n${body}`);
    return message;
  }
}
