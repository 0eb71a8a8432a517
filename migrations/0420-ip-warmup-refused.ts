// What the recipients counted in ip_warmup_counts.sent were answered with: `refused` counts those
// deferred (4xx, or a timeout or reset after the MX host was reached) or bounced (5xx). A day of the
// warm-up where too many were refused holds the ramp (mta/warmup.ts `WARMUP_HOLD`).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE ip_warmup_counts ADD COLUMN refused int NOT NULL DEFAULT 0;`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE ip_warmup_counts DROP COLUMN IF EXISTS refused;`);
};
