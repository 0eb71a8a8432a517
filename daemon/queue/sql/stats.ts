// Per-queue load for /health/queues, the dashboard and the doctor.
import { declare } from '../../db/sql.ts';

export interface RawQueueStats {
  queue: string;
  depth: number;
  running: number;
  scheduled: number;
  failed: number;
  oldest_ms: number | null;
}

export const QUEUE_STATS = declare(
  'queue.stats',
  `
  WITH live AS (
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
);
