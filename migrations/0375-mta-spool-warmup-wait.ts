// A row that waits for warm-up capacity names the pool it waits on, so that a change to that pool
// (an address added, a schedule edited, a warm-up start moved) makes it due at once instead of at the
// next UTC day. Cleared by any other outcome.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE mta_spool ADD COLUMN warmup_wait_pool uuid;
    CREATE INDEX mta_spool_warmup_wait ON mta_spool (warmup_wait_pool) WHERE warmup_wait_pool IS NOT NULL;`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP INDEX IF EXISTS mta_spool_warmup_wait; ALTER TABLE mta_spool DROP COLUMN warmup_wait_pool;`);
};
