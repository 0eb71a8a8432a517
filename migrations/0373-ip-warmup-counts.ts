// Messages sent per source address, per provider, per UTC day: what the warm-up ceilings are checked
// against. The MTA loop adds to it in the statement that commits a batch (one upsert per batch).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE ip_warmup_counts (
      address_id uuid NOT NULL REFERENCES ip_pool_addresses(id) ON DELETE CASCADE,
      provider text NOT NULL,
      day date NOT NULL,
      sent int NOT NULL DEFAULT 0,
      PRIMARY KEY (address_id, day, provider)
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS ip_warmup_counts;`);
};
