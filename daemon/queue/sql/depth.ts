// Per-queue depth for /metrics (modules/metrics/queue-depth.ts), read at scrape time. Bounded
// whatever the backlog: each count stops at $2 rows (an index range of jobs_waiting_idx), and the
// oldest due job is the first entry of that index — a scrape of a queue a million jobs deep reads
// at most $2 entries per count, where /health/queues' GROUP BY (./stats.ts) reads every row.
import { declare } from '../../db/sql.ts';

/** One queue's depth: due and waiting, waiting for a future time, leased; how long the oldest due one has waited. */
export interface RawQueueDepth {
  queue: string;
  ready: number;
  scheduled: number;
  running: number;
  oldest_ms: string | null;
}

/** $1: the queue names; $2: the most rows one count reads. */
export const JOBS_DEPTH = declare(
  'queue.depth',
  `
  SELECT q.queue,
         (SELECT count(*) FROM (SELECT 1 FROM jobs j WHERE j.queue = q.queue AND j.locked_until IS NULL AND j.run_at <= now() LIMIT $2) r)::int AS ready,
         (SELECT count(*) FROM (SELECT 1 FROM jobs j WHERE j.queue = q.queue AND j.locked_until IS NULL AND j.run_at > now() LIMIT $2) r)::int AS scheduled,
         (SELECT count(*) FROM (SELECT 1 FROM jobs j WHERE j.queue = q.queue AND j.locked_until IS NOT NULL LIMIT $2) r)::int AS running,
         floor(extract(epoch FROM now() - (SELECT j.run_at FROM jobs j WHERE j.queue = q.queue AND j.locked_until IS NULL AND j.run_at <= now()
                                            ORDER BY j.run_at LIMIT 1)) * 1000)::bigint AS oldest_ms
    FROM unnest($1::text[]) AS q(queue)`,
);
