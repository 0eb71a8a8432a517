// Per-queue load for /health/queues and the dashboard (the statement: ./sql/stats.ts).
import type { Sequelize, Transaction } from 'sequelize';
import { sequelizeRows } from '../db/sql.ts';
import { QUEUE_STATS, type RawQueueStats } from './sql/stats.ts';
import { QUEUES } from '../../shared/constants.ts';
import type { QueueStats } from './types.ts';

/** Every known queue (zeros when idle) plus any other queue that has rows. */
export async function queueStats(
  sequelize: Sequelize,
  stuckAfterMs: number,
  transaction?: Transaction,
): Promise<Record<string, QueueStats>> {
  const rows = await sequelizeRows<RawQueueStats>(sequelize, QUEUE_STATS, [], transaction);
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
