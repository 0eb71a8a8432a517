// Per-tenant delivery throttles (issue 29): messages per second and per hour a tenant's mail may leave
// the MTA at, so one tenant's burst cannot spend a provider's patience for the others. Set by platform
// admins (PUT /platform/tenants/{id}/throttle); no row: no throttle.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE mta_tenant_throttles (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      messages_per_second real CHECK (messages_per_second > 0),
      messages_per_hour int CHECK (messages_per_hour > 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK (messages_per_second IS NOT NULL OR messages_per_hour IS NOT NULL)
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS mta_tenant_throttles;`);
};
