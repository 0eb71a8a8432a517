import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { shortDate } from '../../format.ts';
import { followMessages, getMessage, getRawMessage } from '../../services/inbound-routing.ts';
import { inboundFilterFlags, inboundFilters } from '../../services/inbound-filter-flags.ts';
import { renderInboundTail } from '../../ui/render.ts';
import { followLines } from '../../services/follow-lines.ts';

export default class InboundTail extends SvcCommand<typeof InboundTail> {
  static override operations = ['getInboundMessages', 'getInboundMessagesById', 'getInboundMessagesByIdRaw'];
  static override summary = 'Follow routed mail as it arrives.';
  static override description =
    'In a terminal: a live view; ↑/↓ select, Enter opens the parsed message, r its raw source, s cycles the ' +
    'status filter, p pauses, q quits. Without a terminal (or with --plain): one line per message or status ' +
    'change, or with --json one JSON object per line (NDJSON). Polls GET /inbound/messages.';
  static override examples = [
    '<%= config.bin %> inbound tail',
    '<%= config.bin %> inbound tail --status failed',
    '<%= config.bin %> inbound tail --json --count 1 --backlog 0 --timeout 5   # wait for the next message',
  ];
  static override flags = {
    ...inboundFilterFlags,
    backlog: Flags.integer({ min: 0, max: 100, default: 20, description: 'recent messages to show first' }),
    count: Flags.integer({ min: 1, description: 'stop after this many lines (plain and JSON modes)' }),
    timeout: Flags.integer({ min: 1, description: 'stop after this many seconds (plain and JSON modes)' }),
    plain: Flags.boolean({ description: 'one line per change even in a terminal' }),
    'poll-interval': Flags.integer({ min: 250, default: 2000, description: 'milliseconds between polls' }),
  };

  async run(): Promise<void> {
    const f = this.flags;
    const filters = inboundFilters(f);
    const source = (signal: AbortSignal) =>
      followMessages(this.client, { signal, backlog: f.backlog, pollMs: f['poll-interval'], filters });
    if (this.interactive && !f.plain && !this.jsonEnabled()) {
      // The screen filters by status itself (s cycles it), so the feed carries every status.
      const all = (signal: AbortSignal) =>
        followMessages(this.client, {
          signal,
          backlog: f.backlog,
          pollMs: f['poll-interval'],
          filters: { ...filters, status: undefined },
        });
      await renderInboundTail({
        source: all,
        loadDetail: (id) => getMessage(this.client, id),
        loadRaw: async (id) => (await getRawMessage(this.client, id)).toString('utf8'),
        initialStatus: f.status,
      });
      return;
    }
    await followLines(source, { count: f.count, timeoutSeconds: f.timeout }, (m) => {
      if (this.jsonEnabled()) process.stdout.write(`${JSON.stringify(m)}\n`);
      else
        this.log(
          `${shortDate(m.updatedAt)}  ${m.status.padEnd(9)}  ${m.id}  ${m.from ?? m.mailFrom ?? '<>'} → ${m.recipient}  ${m.subject ?? ''}`,
        );
      return true;
    });
  }
}
