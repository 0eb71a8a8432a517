// Webhook deliveries are claimed straight from webhook_deliveries instead of one `jobs` row each.
// due_at: when the next attempt may start (NULL once settled, and for the API's one-off test
// deliveries). While a worker holds a delivery, due_at is its lease's end, so an expired lease makes
// the delivery due again with no reclaim sweep; locked_by says whose outcome may settle it.
// paused_until: a receiver that answered 429 with Retry-After is left alone until then.
// Pending deliveries that wait as jobs in the 'webhook' queue move over here, due when their job was.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE webhook_deliveries
      ADD COLUMN due_at timestamptz DEFAULT now(),
      ADD COLUMN locked_by text,
      ADD COLUMN locked_until timestamptz;
    ALTER TABLE webhook_endpoints ADD COLUMN paused_until timestamptz;

    UPDATE webhook_deliveries d
       SET due_at = CASE WHEN j.run_at IS NULL THEN NULL WHEN j.locked_until IS NOT NULL THEN now() ELSE j.run_at END
      FROM webhook_deliveries w
      LEFT JOIN jobs j ON j.queue = 'webhook' AND j.payload->>'deliveryId' = w.id::text
     WHERE d.id = w.id;
    UPDATE webhook_deliveries SET due_at = NULL WHERE status <> 'pending' AND due_at IS NOT NULL;
    DELETE FROM jobs WHERE queue = 'webhook' AND payload ? 'deliveryId';

    -- What the claim scans: pending deliveries in due order (settled rows leave the index).
    CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (due_at) WHERE status = 'pending';
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    INSERT INTO jobs (queue, tenant_id, payload, run_at, max_attempts, key)
    SELECT 'webhook', tenant_id, jsonb_build_object('deliveryId', id), due_at, 10000, 'delivery:' || id
      FROM webhook_deliveries WHERE status = 'pending' AND due_at IS NOT NULL
    ON CONFLICT (queue, key) WHERE key IS NOT NULL DO NOTHING;
    DROP INDEX IF EXISTS webhook_deliveries_due_idx;
    ALTER TABLE webhook_endpoints DROP COLUMN IF EXISTS paused_until;
    ALTER TABLE webhook_deliveries DROP COLUMN IF EXISTS due_at, DROP COLUMN IF EXISTS locked_by, DROP COLUMN IF EXISTS locked_until;
  `);
};
