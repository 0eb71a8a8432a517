// Messages each throttled tenant has sent in each clock hour, shared by every node: a message is
// counted (atomically, under the hourly limit) just before it is attempted, so the hourly throttle
// holds across nodes exactly. Rows older than two hours are pruned by the MTA loop.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE mta_tenant_hourly (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      -- Hours since the epoch, from the database's clock (every node counts in the same hour).
      hour bigint NOT NULL,
      sent int NOT NULL,
      PRIMARY KEY (tenant_id, hour)
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS mta_tenant_hourly;`);
};
