// Pending webhook deliveries for /metrics (modules/metrics/queue-depth.ts), read at scrape time.
// Bounded whatever the backlog, unlike delivery-store.ts's BACKLOG (/health/queues): each count stops
// at $1 rows of the partial index webhook_deliveries_due_idx, and the oldest due delivery is its first
// entry. A held delivery's due_at is its lease's end (delivery-store.ts): due and held are told apart by it.
import { declare } from '../../../db/sql.ts';

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
