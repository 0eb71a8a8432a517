// The MTA's view of its resolver (issue 49 §3, daemon/mta/resolver-health.ts), one row per node: a
// resolver fault is shown once (the queue view, /metrics) rather than as every message's deferral.
// Written by the node's MTA thread at each canary check; read by the API of any node.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE mta_resolver_health (
      node text PRIMARY KEY,
      healthy boolean NOT NULL,
      since timestamptz NOT NULL,
      last_error text,
      canaries text[] NOT NULL,
      checked_at timestamptz NOT NULL
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS mta_resolver_health;`);
};
