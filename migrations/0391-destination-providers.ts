// Which provider a recipient domain's MX hosts belong to, as the MTA last saw them: a complaint or
// a late bounce arrives without MX hosts (an ARF report, a provider webhook), and is counted under
// the provider its domain was delivered to (a Workspace domain under google, not under default).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE destination_providers (
      domain text PRIMARY KEY,
      provider text NOT NULL,
      seen_at timestamptz NOT NULL DEFAULT now()
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS destination_providers;`);
};
