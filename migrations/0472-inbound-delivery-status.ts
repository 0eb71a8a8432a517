// An inbound message delivered by webhook (issue 52) takes its status from its delivery: the
// endpoint's 2xx makes it `delivered`, retries exhausted `failed`, a replay (a new pending delivery
// of the same event) `received` again. A trigger rather than a step of the webhook worker: the
// delivery pipeline stays one engine that knows no inbound message, and the status changes in the
// very statement that settles the delivery, so no crash can leave them apart. Its WHEN clause keeps
// it off every other event's deliveries.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE FUNCTION svc_inbound_delivery_status() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE inbound_messages
         SET status = CASE NEW.status WHEN 'succeeded' THEN 'delivered' WHEN 'failed' THEN 'failed' ELSE 'received' END,
             error = CASE WHEN NEW.status = 'succeeded' THEN NULL ELSE NEW.error END,
             updated_at = now()
       WHERE event_id = NEW.event_id AND action = 'webhook';
      RETURN NULL;
    END $$;
    CREATE TRIGGER webhook_deliveries_inbound_status AFTER INSERT OR UPDATE OF status ON webhook_deliveries
      FOR EACH ROW WHEN (NEW.event_type = 'inbound.received')
      EXECUTE FUNCTION svc_inbound_delivery_status();`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    DROP TRIGGER IF EXISTS webhook_deliveries_inbound_status ON webhook_deliveries;
    DROP FUNCTION IF EXISTS svc_inbound_delivery_status();`);
};
