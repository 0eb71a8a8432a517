// Why a spool row waits when the wait is ours (issue 49 §4): warm-up capacity, a throttle, a
// suspension, pacing. Set when the MTA gives the row back without an attempt, cleared by an attempt;
// the queue view counts such rows as `waiting` (with the reason), and the loop writes a `waiting`
// timeline row only when the reason changes.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE mta_spool ADD COLUMN wait_reason text;`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE mta_spool DROP COLUMN wait_reason;`);
};
