// Operator holds per destination domain for the outbound MTA (issue 28, docs/mta.md "Visibility"):
// `svc queue hold <domain>` writes a row with held_at, the MTA loop's claim skips the spool rows of a
// held domain, `svc queue release` clears it. A row may exist before any mail to the domain is
// spooled (a pre-emptive hold). The spool rows themselves stay queued or deferred, expiry unchanged.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE mta_destinations (
      -- Lower case, an IDN as its A-label: the form mta_spool.domain is stored in.
      domain text PRIMARY KEY,
      held_at timestamptz,
      held_by uuid REFERENCES admins(id) ON DELETE SET NULL,
      hold_reason text,
      updated_at timestamptz NOT NULL DEFAULT now()
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS mta_destinations;`);
};
