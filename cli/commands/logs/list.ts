import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { colourStatus, pageLine, recipients, shortDate, table } from '../../format.ts';
import { EMAIL_STATUSES } from '../../../shared/constants.ts';
import type { EmailLog, Page } from '../../api-types.ts';

export default class LogsList extends SvcCommand<typeof LogsList> {
  static override summary = 'List sent email, newest first, with filters.';
  static override examples = [
    '<%= config.bin %> logs list',
    '<%= config.bin %> logs list --status FAILED --since 2026-05-01T00:00:00Z --json',
    '<%= config.bin %> logs list --to ada@example.com --tag welcome',
  ];
  static override flags = {
    status: Flags.option({ options: EMAIL_STATUSES, description: 'only this status' })(),
    to: Flags.string({ description: 'only this recipient' }),
    since: Flags.string({ description: 'created at or after (ISO 8601)' }),
    until: Flags.string({ description: 'created before (ISO 8601)' }),
    tag: Flags.string({ description: 'only sends with this tag' }),
    page: Flags.integer({ min: 1, description: 'page number' }),
    limit: Flags.integer({ min: 1, max: 100, description: 'entries per page (max 100)' }),
  };

  async run(): Promise<Page<EmailLog>> {
    const { status, to, since, until, tag, page, limit } = this.flags;
    const logs = await this.client.listLogs({ status, to, since, until, tag, page, limit });
    this.log(table(logs.data, [
      { header: 'ID', value: (l) => l.id },
      { header: 'STATUS', value: (l) => colourStatus(l.status) },
      { header: 'TO', value: (l) => recipients(l.to) },
      { header: 'SUBJECT', value: (l) => (l.subject ?? '').slice(0, 50) },
      { header: 'CREATED', value: (l) => shortDate(l.createdAt) },
    ], 'No email matches.'));
    this.log(pageLine(logs.meta));
    return logs;
  }
}
