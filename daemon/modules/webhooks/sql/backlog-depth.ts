// Pending webhook deliveries: due and waiting, held by a worker, waiting for a retry, and how long the
// oldest due one has waited. One statement for /metrics (modules/metrics/queue-depth.ts, read at scrape
// time, each count stopped at a cap so a scrape stays cheap whatever the backlog) and /health/queues
// (modules/health/service.ts, exact: no cap). Each count runs over the partial index
// webhook_deliveries_due_idx, and the oldest due delivery is its first entry. A held delivery's due_at
// is its lease's end (delivery-store.ts): due and held are told apart by it.
import { declare, type Sql } from '../../../db/sql.ts';

// $1: the cap of each count; NULL counts all (LIMIT NULL is no limit).
export const WEBHOOK_DELIVERIES_DEPTH = declare(
  'webhook_deliveries_depth',
  `
  SELECT 'webhook_deliveries' AS queue,
         (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND due_at <= now() LIMIT $1) r)::int AS ready,
         (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND due_at > now() AND locked_by IS NULL LIMIT $1) r)::int AS scheduled,
         (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND due_at > now() AND locked_by IS NOT NULL LIMIT $1) r)::int AS running,
         floor(extract(epoch FROM now() - (SELECT due_at FROM webhook_deliveries WHERE status = 'pending' AND due_at <= now()
                                            ORDER BY due_at LIMIT 1)) * 1000)::bigint AS oldest_ms`,
);

export interface DeliveryBacklog {
  depth: number;
  running: number;
  scheduled: number;
  oldestWaitingAgeMs: number;
}

/** The pending deliveries, each count exact (for /health/queues). */
export async function deliveryBacklog(sql: Sql): Promise<DeliveryBacklog> {
  const [row] = await sql.rows<{ ready: number; running: number; scheduled: number; oldest_ms: string | null }>(
    WEBHOOK_DELIVERIES_DEPTH,
    [null],
  );
  return {
    depth: row.ready,
    running: row.running,
    scheduled: row.scheduled,
    oldestWaitingAgeMs: Math.max(0, Number(row.oldest_ms ?? 0)),
  };
}

/**
 * The 'webhook' queue's figures for /health/queues: its jobs (SNS confirmations) plus the pending
 * deliveries, which are no longer jobs.
 */
export async function addDeliveryBacklog<
  T extends { depth: number; oldestWaitingAgeMs: number; running: number; scheduled: number; stuck: boolean },
>(stats: T | undefined, sql: Sql, stuckAfterMs: number): Promise<T | undefined> {
  if (!stats) return stats;
  const backlog = await deliveryBacklog(sql);
  const depth = stats.depth + backlog.depth;
  const oldest = Math.max(stats.oldestWaitingAgeMs, backlog.oldestWaitingAgeMs);
  return {
    ...stats,
    depth,
    running: stats.running + backlog.running,
    scheduled: stats.scheduled + backlog.scheduled,
    oldestWaitingAgeMs: oldest,
    stuck: depth > 0 && oldest > stuckAfterMs,
  };
}
