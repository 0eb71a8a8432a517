// webhook_deliveries becomes partitioned by month. replay_of loses its self-reference (it would need
// created_at too): a replay keeps the original's id even after the original expired.
import type { Migration } from '../daemon/db/migrate.ts';
import { partitionTableSql, unpartitionTableSql } from '../daemon/db/partitions.ts';

const INDEXES = `
  CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC);
  CREATE INDEX webhook_deliveries_tenant_idx ON webhook_deliveries (tenant_id, created_at DESC);
  CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (due_at) WHERE status = 'pending';
  ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE;
  ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE`;

export const up: Migration = async ({ context }) => {
  await context.sql(
    await partitionTableSql(
      context.sequelize,
      'webhook_deliveries',
      `
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id, created_at);
    ${INDEXES}`,
    ),
  );
};

export const down: Migration = async ({ context }) => {
  await context.sql(
    unpartitionTableSql(
      'webhook_deliveries',
      `
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);
    ${INDEXES};
    UPDATE webhook_deliveries d SET replay_of = NULL WHERE replay_of IS NOT NULL AND NOT EXISTS (SELECT 1 FROM webhook_deliveries o WHERE o.id = d.replay_of);
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_replay_of_fkey FOREIGN KEY (replay_of) REFERENCES webhook_deliveries(id) ON DELETE SET NULL`,
    ),
  );
};
