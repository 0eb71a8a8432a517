// IP pools (issue 29, docs/mta.md "IP pools and warm-up"): a named group of source addresses the
// outbound MTA sends from. `warmup_schedule` is the pool's own per-provider ceilings (null: the
// shipped 30-day default of daemon/mta/warmup.ts), so editing it changes every address of the pool.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE ip_pools (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL UNIQUE,
      description text,
      warmup_schedule jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS ip_pools;`);
};
