// Per-tenant retention overrides (days; NULL = the platform default). An override can only shorten
// the platform's horizon: partitions are dropped at the platform default, shorter horizons are
// enforced by batched deletes (daemon/modules/retention/).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE tenant_retention (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      logs_days integer CHECK (logs_days >= 1),
      bodies_days integer CHECK (bodies_days >= 1),
      raw_days integer CHECK (raw_days >= 1),
      events_days integer CHECK (events_days >= 1),
      webhook_deliveries_days integer CHECK (webhook_deliveries_days >= 1),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS tenant_retention');
};
