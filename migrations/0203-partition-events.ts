// The event outbox becomes partitioned by month. webhook_deliveries.event_id loses its foreign key
// (it would need created_at too); a delivery carries a copy of the payload and never needs the event.
import type { Migration } from '../daemon/db/migrate.ts';
import { partitionTableSql, unpartitionTableSql } from '../daemon/db/partitions.ts';

const INDEXES = `
  CREATE INDEX events_tenant_idx ON events (tenant_id, created_at DESC);
  CREATE INDEX events_email_idx ON events (email_id, created_at) WHERE email_id IS NOT NULL;
  CREATE INDEX events_pending_fanout_idx ON events (created_at) WHERE fanned_out_at IS NULL;
  ALTER TABLE events ADD CONSTRAINT events_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE`;

export const up: Migration = async ({ context }) => {
  await context.sql(
    await partitionTableSql(
      context.sequelize,
      'events',
      `
    ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (id, created_at);
    ${INDEXES}`,
    ),
  );
};

export const down: Migration = async ({ context }) => {
  await context.sql(
    unpartitionTableSql(
      'events',
      `
    ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (id);
    ${INDEXES};
    UPDATE webhook_deliveries d SET event_id = NULL WHERE event_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM events e WHERE e.id = d.event_id);
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(id) ON DELETE SET NULL`,
    ),
  );
};
