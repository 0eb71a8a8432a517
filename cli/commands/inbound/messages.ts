import { Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { shortDate, table } from '../../format.ts';
import { listMessages } from '../../services/inbound-routing.ts';
import { inboundFilterFlags, inboundFilters } from '../../services/inbound-filter-flags.ts';
import { formatBytes } from '../../services/inbound-message-view.ts';
import type { InboundMessagesPage } from '../../../shared/schemas/inbound.ts';

export default class InboundMessages extends SvcCommand<typeof InboundMessages> {
  static override operations = ['getInboundMessages'];
  static override summary = 'List and search routed messages, newest first.';
  static override examples = [
    '<%= config.bin %> inbound messages',
    '<%= config.bin %> inbound messages --status failed --since 2026-11-01T00:00:00Z',
    '<%= config.bin %> inbound messages --from ada@example.com --subject invoice --json',
  ];
  static override flags = {
    ...inboundFilterFlags,
    since: Flags.string({ description: 'received at or after (ISO 8601)' }),
    until: Flags.string({ description: 'received before (ISO 8601)' }),
    limit: Flags.integer({ min: 1, max: 100, default: 20, description: 'messages per page' }),
    cursor: Flags.string({ description: 'the next page: the cursor the previous page printed' }),
  };

  async run(): Promise<InboundMessagesPage> {
    const f = this.flags;
    const page = await listMessages(this.client, {
      ...inboundFilters(f),
      since: f.since,
      until: f.until,
      limit: f.limit,
      cursor: f.cursor,
    });
    this.log(
      table(
        page.data,
        [
          { header: 'RECEIVED', value: (m) => shortDate(m.createdAt) },
          { header: 'ID', value: (m) => m.id },
          { header: 'STATUS', value: (m) => (m.status === 'failed' ? chalk.red(m.status) : m.status) },
          { header: 'FROM', value: (m) => m.from ?? m.mailFrom ?? '<>' },
          { header: 'TO', value: (m) => m.recipient },
          { header: 'SUBJECT', value: (m) => m.subject ?? '' },
          { header: 'SIZE', value: (m) => formatBytes(m.size) },
        ],
        'No routed messages match.',
      ),
    );
    if (page.meta.nextCursor) this.log(chalk.dim(`older: --cursor ${page.meta.nextCursor}`));
    return page;
  }
}
