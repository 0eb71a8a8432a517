// Per-queue load for /health/queues and the dashboard.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { QUEUES } from '../../shared/constants.ts';
import type { QueueStats } from './types.ts';

interface RawStats {
  queue: string;
  depth: number;
  running: number;
  scheduled: number;
  failed: number;
  oldest_ms: number | null;
}

/** Every known queue (zeros when idle) plus any other queue that has rows. */
export async function queueStats(
  sequelize: Sequelize,
  stuckAfterMs: number,
  transaction?: Transaction,
): Promise<Record<string, QueueStats>> {
  const rows = await sequelize.query<RawStats>(
    `WITH live AS (
       SELECT queue,
              count(*) FILTER (WHERE locked_until IS NULL AND run_at <= now()) AS depth,
              count(*) FILTER (WHERE locked_until IS NOT NULL) AS running,
              count(*) FILTER (WHERE locked_until IS NULL AND run_at > now()) AS scheduled,
              floor(extract(epoch FROM now() - min(run_at) FILTER (WHERE locked_until IS NULL AND run_at <= now())) * 1000) AS oldest_ms
         FROM jobs GROUP BY queue
     ), dead AS (
       SELECT queue, count(*) AS failed FROM failed_jobs GROUP BY queue
     )
     SELECT COALESCE(live.queue, dead.queue) AS queue,
            COALESCE(live.depth, 0) AS depth, COALESCE(live.running, 0) AS running,
            COALESCE(live.scheduled, 0) AS scheduled, COALESCE(dead.failed, 0) AS failed,
            live.oldest_ms
       FROM live FULL JOIN dead ON dead.queue = live.queue`,
    { type: QueryTypes.SELECT, transaction },
  );
  const stats: Record<string, QueueStats> = {};
  for (const queue of QUEUES) {
    stats[queue] = { depth: 0, oldestWaitingAgeMs: 0, running: 0, scheduled: 0, failed: 0, stuck: false };
  }
  for (const row of rows) {
    const oldest = Math.max(0, Number(row.oldest_ms ?? 0));
    stats[row.queue] = {
      depth: Number(row.depth),
      oldestWaitingAgeMs: oldest,
      running: Number(row.running),
      scheduled: Number(row.scheduled),
      failed: Number(row.failed),
      stuck: Number(row.depth) > 0 && oldest > stuckAfterMs,
    };
  }
  return stats;
}
