// GET /inbound/stats (issue 52 §4, docs/inbound.md "Stats"): the tenant's routed mail by status over the
// last 24 hours and 7 days, per route, and the webhook endpoints whose latest inbound delivery failed,
// with its error. Counted in SQL (sql/stats.ts, webhooks/sql/inbound-failures.ts), so the dashboard no
// longer pages through messages to count them. No HTTP.
import type { Sequelize } from 'sequelize';
import type { TenantContext } from '../../context.ts';
import {
  INBOUND_MESSAGE_STATUSES,
  type InboundStats,
  type InboundStatusCounts,
} from '../../../shared/schemas/inbound.ts';
import { failingInboundEndpoints } from '../webhooks/sql/inbound-failures.ts';
import { statusCounts } from './sql/stats.ts';

const HOUR_MS = 3_600_000;
/** The windows the counts cover: the dashboard's day, and the week a failing endpoint is looked for in. */
export const INBOUND_STATS_WINDOWS_MS = { last24h: 24 * HOUR_MS, last7d: 7 * 24 * HOUR_MS } as const;
/** Failing endpoints listed at most: a tenant has few endpoints, a screen fewer lines. */
export const MAX_FAILING_ENDPOINTS = 20;

function noCounts(): InboundStatusCounts {
  return { total: 0, received: 0, delivered: 0, failed: 0, stored: 0, forwarded: 0 };
}

export async function inboundStats(
  deps: { db: { sequelize: Sequelize } },
  ctx: TenantContext,
  now = new Date(),
): Promise<InboundStats> {
  const since24h = new Date(now.getTime() - INBOUND_STATS_WINDOWS_MS.last24h);
  const since7d = new Date(now.getTime() - INBOUND_STATS_WINDOWS_MS.last7d);
  const [rows, failing] = await Promise.all([
    statusCounts(deps.db.sequelize, ctx.tenantId, { since7d, since24h }),
    failingInboundEndpoints(deps.db.sequelize, ctx.tenantId, since7d, MAX_FAILING_ENDPOINTS),
  ]);
  const last24h = noCounts();
  const last7d = noCounts();
  const routes = new Map<string | null, InboundStats['routes'][number]>();
  for (const row of rows) {
    if (!(INBOUND_MESSAGE_STATUSES as readonly string[]).includes(row.status)) continue;
    let route = routes.get(row.route_id);
    if (!route)
      routes.set(
        row.route_id,
        (route = {
          routeId: row.route_id,
          address: row.match_address,
          action: row.action,
          last24h: noCounts(),
          last7d: noCounts(),
        }),
      );
    for (const [counts, n] of [
      [last24h, row.last_24h],
      [last7d, row.last_7d],
      [route.last24h, row.last_24h],
      [route.last7d, row.last_7d],
    ] as const) {
      counts[row.status] += n;
      counts.total += n;
    }
  }
  return {
    last24h: { since: since24h.toISOString(), ...last24h },
    last7d: { since: since7d.toISOString(), ...last7d },
    routes: [...routes.values()].sort(
      (a, b) => b.last7d.total - a.last7d.total || String(a.address).localeCompare(String(b.address)),
    ),
    failingEndpoints: failing.map((row) => ({
      endpointId: row.endpoint_id,
      url: row.url,
      enabled: row.enabled,
      consecutiveFailures: row.consecutive_failures,
      failed: row.failed,
      retrying: row.retrying,
      lastError: row.last_error,
      lastFailedAt: new Date(row.last_failed_at).toISOString(),
    })),
  };
}
