// Queue depth and the age of the oldest due item, per queue, for /metrics. The queues are rows of
// PostgreSQL shared by every node, so they are read from it at scrape time (every node answers the
// same figures) by three bounded statements, one per table in its home: jobs (queue/sql/depth.ts),
// the MTA's spool (mta/sql/spool-depth.ts) and webhook deliveries (webhooks/sql/backlog-depth.ts). The
// answer is kept QUEUE_DEPTH_TTL_MS: a scrape storm costs one read per node per interval.
import type { Sql } from '../../db/sql.ts';
import { JOBS_DEPTH, type RawQueueDepth } from '../../queue/sql/depth.ts';
import { SPOOL_DEPTH } from '../../mta/sql/spool-depth.ts';
import { WEBHOOK_DELIVERIES_DEPTH } from '../webhooks/sql/backlog-depth.ts';
import { QUEUES } from '../../../shared/constants.ts';
import { cachedLoad, TtlCache } from '../../ttl-cache.ts';

/** How long one read serves every scrape of this node. */
export const QUEUE_DEPTH_TTL_MS = 2_000;
/**
 * Each count stops here: a value of DEPTH_COUNT_CAP means "at least that many". Far above any alert
 * threshold, and it keeps a scrape of a queue millions deep to a few milliseconds.
 */
export const DEPTH_COUNT_CAP = 10_000;

export interface QueueDepth {
  queue: string;
  /** Due now and waiting for a worker. */
  ready: number;
  /** Waiting for a future time: a retry's backoff, a deferral, a scheduled send. */
  scheduled: number;
  /** Held by a worker now. */
  running: number;
  /** How long the oldest ready item has been due (0 when none is). */
  oldestReadySeconds: number;
}

function depthOf(row: RawQueueDepth): QueueDepth {
  return {
    queue: row.queue,
    ready: row.ready,
    scheduled: row.scheduled,
    running: row.running,
    oldestReadySeconds: Math.max(0, Number(row.oldest_ms ?? 0)) / 1000,
  };
}

/** The reader the registry calls at each scrape: one read per QUEUE_DEPTH_TTL_MS, shared by concurrent scrapes. */
export function createQueueDepthReader(sql: Sql): () => Promise<QueueDepth[]> {
  const cache = new TtlCache<Promise<QueueDepth[]>>(QUEUE_DEPTH_TTL_MS, 1);
  const read = async (): Promise<QueueDepth[]> => {
    const [jobs, spool, webhooks] = await Promise.all([
      sql.rows<RawQueueDepth>(JOBS_DEPTH, [[...QUEUES], DEPTH_COUNT_CAP]),
      sql.rows<RawQueueDepth>(SPOOL_DEPTH, [DEPTH_COUNT_CAP]),
      sql.rows<RawQueueDepth>(WEBHOOK_DELIVERIES_DEPTH, [DEPTH_COUNT_CAP]),
    ]);
    return [...jobs, ...spool, ...webhooks].map(depthOf);
  };
  return () => cachedLoad(cache, 'depth', read);
}
