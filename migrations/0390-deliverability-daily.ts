// Per-destination deliverability (issue 29, docs/mta.md "Sender rules and deliverability"): a daily
// rollup per tenant and mailbox provider (mta/providers.ts keys: google, yahoo, microsoft, apple,
// default), counted in the transaction that records each outcome, so GET /stats/deliverability reads
// a few rows per day instead of scanning the logs. Days are UTC.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE deliverability_daily (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      day date NOT NULL,
      provider text NOT NULL,
      delivered integer NOT NULL DEFAULT 0,
      deferred integer NOT NULL DEFAULT 0,
      bounced integer NOT NULL DEFAULT 0,
      complained integer NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, day, provider)
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS deliverability_daily;`);
};
