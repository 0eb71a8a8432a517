// The spool's depth for /metrics (modules/metrics/queue-depth.ts), read at scrape time. Bounded
// whatever the backlog: each count stops at $1 rows (ranges of the partial indexes mta_spool_due and
// mta_spool_leased), and the oldest due row is the first entry of mta_spool_due.
import { declare } from '../../db/sql.ts';

export const SPOOL_DEPTH = declare(
  'mta.spool-depth',
  `
  SELECT 'mta_spool' AS queue,
         (SELECT count(*) FROM (SELECT 1 FROM mta_spool WHERE state IN ('queued', 'deferred') AND run_at <= now() LIMIT $1) r)::int AS ready,
         (SELECT count(*) FROM (SELECT 1 FROM mta_spool WHERE state IN ('queued', 'deferred') AND run_at > now() LIMIT $1) r)::int AS scheduled,
         (SELECT count(*) FROM (SELECT 1 FROM mta_spool WHERE state = 'leased' LIMIT $1) r)::int AS running,
         floor(extract(epoch FROM now() - (SELECT run_at FROM mta_spool WHERE state IN ('queued', 'deferred') AND run_at <= now()
                                            ORDER BY run_at LIMIT 1)) * 1000)::bigint AS oldest_ms`,
);
