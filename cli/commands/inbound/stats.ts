import { SvcCommand } from '../../base-command.ts';
import { shortDate, table } from '../../format.ts';
import { getStats } from '../../services/inbound-routing.ts';
import type { InboundStats, InboundStatusCounts } from '../../../shared/schemas/inbound.ts';

const counts = (c: InboundStatusCounts) =>
  `${c.total} (${c.delivered} delivered, ${c.failed} failed, ${c.received} pending, ${c.stored} stored, ${c.forwarded} forwarded)`;

export default class InboundStatsCommand extends SvcCommand<typeof InboundStatsCommand> {
  static override operations = ['getInboundStats'];
  static override summary =
    'Routed mail by status over the last 24 hours and 7 days, per route, and the failing endpoints.';
  static override description =
    'Counts are of messages taken in the window, by their status now: delivered (the endpoint answered 2xx), ' +
    'failed (its retries ran out, or the endpoint was off), pending (taken, its webhook not yet answered), stored, ' +
    'forwarded. An endpoint is failing when its latest inbound.received delivery failed; `svc inbound replay` ' +
    'delivers a message again once it is fixed.';
  static override examples = [
    '<%= config.bin %> inbound stats',
    '<%= config.bin %> inbound stats --json | jq .last24h.failed',
  ];

  async run(): Promise<InboundStats> {
    const stats = await getStats(this.client);
    this.log(`last 24 h  ${counts(stats.last24h)}`);
    this.log(`last 7 d   ${counts(stats.last7d)}`);
    this.log('');
    this.log(
      table(
        stats.routes,
        [
          { header: 'ROUTE', value: (r) => r.address ?? '(removed, or a reply address)' },
          { header: 'ACTION', value: (r) => r.action ?? '' },
          { header: '24 H', value: (r) => String(r.last24h.total) },
          { header: 'FAILED', value: (r) => String(r.last24h.failed) },
          { header: '7 D', value: (r) => String(r.last7d.total) },
          { header: 'FAILED', value: (r) => String(r.last7d.failed) },
        ],
        'No mail routed in the last 7 days.',
      ),
    );
    this.log('');
    this.log(
      table(
        stats.failingEndpoints,
        [
          { header: 'FAILING ENDPOINT', value: (e) => e.url },
          { header: 'STATE', value: (e) => (e.enabled ? `${e.consecutiveFailures} failures` : 'switched off') },
          { header: 'FAILED', value: (e) => String(e.failed) },
          { header: 'RETRYING', value: (e) => String(e.retrying) },
          { header: 'LAST', value: (e) => shortDate(e.lastFailedAt) },
          { header: 'LAST ERROR', value: (e) => e.lastError },
        ],
        'No endpoint is failing at inbound mail.',
      ),
    );
    return stats;
  }
}
