import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { keyValue, pageLine } from '../../format.ts';
import { describeRows } from '../../records.ts';
import { readableMail, systemMail, type ReadableMail } from '../../services/system-mail.ts';
import type { PageOf } from '../../../shared/schemas/common.ts';
import type { SystemMailMessage, SystemMailSummary } from '../../../shared/schemas/system-mail.ts';

type MailResult = PageOf<SystemMailSummary> | (SystemMailMessage & ReadableMail);

export default class PlatformMail extends SvcCommand<typeof PlatformMail> {
  static override operations = ['getPlatformSystemMail', 'getPlatformSystemMailById'];
  static override summary = 'System mail captured without a relay (verifications, resets, invitations): list or read.';
  static override description =
    'On the embedded default (no SMTP_URL) nothing leaves the machine: this is where the links of system mail are. ' +
    'Platform admins only. With an id, or --latest, prints the message: headers, text and its links.';
  static override examples = [
    '<%= config.bin %> platform mail',
    '<%= config.bin %> platform mail --to ada@example.com --latest',
    '<%= config.bin %> platform mail 6a1d… --raw',
  ];
  static override showHeader = false;
  static override args = { id: Args.string({ description: 'message id: print that message' }) };
  static override flags = {
    to: Flags.string({ description: 'only mail to this address' }),
    latest: Flags.boolean({ description: 'print the newest message (to --to, when given)' }),
    raw: Flags.boolean({ description: 'print the message as captured (RFC 5322)' }),
    page: Flags.integer({ description: 'page number', min: 1 }),
    limit: Flags.integer({ description: 'per page (at most 100)', min: 1, max: 100 }),
  };

  async run(): Promise<MailResult> {
    const { to, latest, page, limit } = this.flags;
    let id = this.args.id;
    if (!id) {
      const list = await systemMail.list(this.client, { to, page, limit: latest ? 1 : limit });
      if (!latest) {
        this.log(describeRows(list.data, ['id', 'createdAt', 'to', 'subject'], 'No captured system mail.'));
        this.log(pageLine(list.meta));
        return list;
      }
      if (!list.data[0])
        throw new CliFailure(`No captured system mail${to ? ` to ${to}` : ''}.`, EXIT.refused, 'NOT_FOUND');
      id = list.data[0].id;
    }
    const message = await systemMail.read(this.client, id);
    const readable = await readableMail(message.raw);
    if (this.flags.raw) this.log(message.raw);
    else {
      this.log(
        keyValue([
          ['from', message.from],
          ['to', message.to.join(', ')],
          ['subject', readable.subject],
          ['date', message.createdAt],
        ]),
      );
      this.log('');
      this.log(readable.text);
    }
    return { ...message, ...readable };
  }
}
