// When a spool row was last tried (issue 28, `svc queue`): the per-destination view shows the latest
// response, and "latest" needs the time of the attempt that gave it (run_at is the next try, which
// depends on the row's attempt count, so it cannot order responses). Set by the record statement.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE mta_spool ADD COLUMN last_attempt_at timestamptz;`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE mta_spool DROP COLUMN IF EXISTS last_attempt_at;`);
};
