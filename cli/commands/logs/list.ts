import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { colourStatus, pageLine, recipients, shortDate, table } from '../../format.ts';
import { EMAIL_STATUSES } from '../../../shared/constants.ts';
import type { EmailLog, Page } from '../../api-types.ts';

export default class LogsList extends SvcCommand<typeof LogsList> {
  static override operations = ['getEmailsLogs'];
  static override summary = 'List sent email, newest first, with filters.';
  static override description =
    'Pages past the first 10,000 logs are read with --cursor (the next cursor is printed under each page) or --all, ' +
    'which walks the whole selection page after page at the same cost per page.';
  static override examples = [
    '<%= config.bin %> logs list',
    '<%= config.bin %> logs list --status FAILED --since 2026-05-01T00:00:00Z --json',
    '<%= config.bin %> logs list --to ada@example.com --tag welcome',
    '<%= config.bin %> logs list --message-id "<0c9d…@example.com>"',
    '<%= config.bin %> logs list --since 2026-05-01T00:00:00Z --all --limit 100 --json',
  ];
  static override flags = {
    status: Flags.option({ options: EMAIL_STATUSES, description: 'only this status' })(),
    to: Flags.string({ description: 'only this recipient (exact address, case-insensitive)' }),
    'message-id': Flags.string({ description: 'only the email with this Message-ID' }),
    since: Flags.string({ description: 'created at or after (ISO 8601)' }),
    until: Flags.string({ description: 'created before (ISO 8601)' }),
    tag: Flags.string({ description: 'only sends with this tag' }),
    page: Flags.integer({
      min: 1,
      description: 'page number (page × limit up to 10,000)',
      exclusive: ['cursor', 'all'],
    }),
    limit: Flags.integer({ min: 1, max: 100, description: 'entries per page (max 100)' }),
    cursor: Flags.string({ description: 'start after this cursor (printed under the previous page)' }),
    all: Flags.boolean({ description: 'every matching email, page after page by cursor' }),
  };

  async run(): Promise<Page<EmailLog>> {
    const { status, to, since, until, tag, page, limit, cursor, all } = this.flags;
    const filters = { status, to, since, until, tag, limit, messageId: this.flags['message-id'] };
    let logs = await this.client.listLogs({ ...filters, page, cursor });
    const data = [...logs.data];
    this.show(logs.data);
    while (all && logs.meta.nextCursor) {
      logs = await this.client.listLogs({ ...filters, cursor: logs.meta.nextCursor });
      data.push(...logs.data);
      this.show(logs.data);
    }
    if (!all) {
      this.log(pageLine(logs.meta));
      if (logs.meta.nextCursor) this.log(`next page: the same command with --cursor ${logs.meta.nextCursor}`);
    }
    return { data, meta: logs.meta };
  }

  private show(rows: EmailLog[]): void {
    this.log(
      table(
        rows,
        [
          { header: 'ID', value: (l) => l.id },
          // A wait of ours (warm-up, throttle) is said beside the status, with when it goes.
          {
            header: 'STATUS',
            value: (l) =>
              colourStatus(l.status) +
              (l.waiting ? ` (waiting: ${l.waiting.kind} until ${l.waiting.until ?? '?'})` : ''),
          },
          { header: 'TO', value: (l) => recipients(l.to) },
          { header: 'SUBJECT', value: (l) => (l.subject ?? '').slice(0, 50) },
          { header: 'CREATED', value: (l) => shortDate(l.createdAt) },
        ],
        'No email matches.',
      ),
    );
  }
}
