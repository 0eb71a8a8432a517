// A webhook delivery settled `skipped` (its endpoint was switched off before the attempt) leaves its
// inbound message `failed` with why, not `received` for ever: the tenant sees it and replays it once
// the endpoint is on again. The trigger of migration 0472, its one CASE changed.
import type { Migration } from '../daemon/db/migrate.ts';

const body = (skipped: string) => `
    CREATE OR REPLACE FUNCTION svc_inbound_delivery_status() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE inbound_messages
         SET status = CASE NEW.status WHEN 'succeeded' THEN 'delivered' WHEN 'failed' THEN 'failed' ${skipped} ELSE 'received' END,
             error = CASE WHEN NEW.status = 'succeeded' THEN NULL ELSE NEW.error END,
             updated_at = now()
       WHERE event_id = NEW.event_id AND action = 'webhook';
      RETURN NULL;
    END $$;`;

export const up: Migration = async ({ context }) => {
  await context.sql(body(`WHEN 'skipped' THEN 'failed'`));
};

export const down: Migration = async ({ context }) => {
  await context.sql(body(''));
};
