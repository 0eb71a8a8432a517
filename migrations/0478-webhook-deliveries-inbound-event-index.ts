// An inbound message's body is stored once, as its webhook delivery's payload (the inbound.received event
// row keeps it without the inline attachments, issue 52 §5): a replay reads it back by the event id
// (webhooks/sql/inbound-body.ts). Partial, so that outbound fan-out pays nothing for it.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE INDEX webhook_deliveries_inbound_event_idx ON webhook_deliveries (event_id)
      WHERE event_type = 'inbound.received'`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP INDEX IF EXISTS webhook_deliveries_inbound_event_idx`);
};
