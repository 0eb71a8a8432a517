// The source addresses of a pool: the IP a connection binds, the name it says in EHLO (which must be
// the IP's PTR, and resolve back to it: the doctor checks), its share of the pool's traffic, and when
// its warm-up started (null: a warm address, no ceilings). An IP belongs to one pool only.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE ip_pool_addresses (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      pool_id uuid NOT NULL REFERENCES ip_pools(id) ON DELETE CASCADE,
      ip text NOT NULL UNIQUE,
      ehlo_name text NOT NULL,
      weight int NOT NULL DEFAULT 1 CHECK (weight > 0),
      warmup_started_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX ip_pool_addresses_pool ON ip_pool_addresses (pool_id);`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS ip_pool_addresses;`);
};
