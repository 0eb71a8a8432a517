// GET /inbound/stats lists the endpoints failing at inbound.received (webhooks/sql/inbound-failures.ts):
// a tenant's deliveries of that one event type over the last 7 days. The tenant index
// (tenant_id, created_at) would read every outbound webhook delivery of the tenant in those days too;
// this partial index holds inbound deliveries only, so outbound fan-out pays nothing for it.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE INDEX webhook_deliveries_inbound_idx ON webhook_deliveries (tenant_id, created_at DESC)
      WHERE event_type = 'inbound.received'`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP INDEX IF EXISTS webhook_deliveries_inbound_idx`);
};
