// The spool rows held by a wait of ours, by their email (issue 49 §4): the logs list shows such a
// send's wait beside its status. Partial: only waiting rows are in it, so the delivery path's rows
// (deferred, delivered) never touch it.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE INDEX mta_spool_waiting_email ON mta_spool (email_id)
     WHERE wait_reason IS NOT NULL OR warmup_wait_pool IS NOT NULL;`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP INDEX IF EXISTS mta_spool_waiting_email;`);
};
