// email_events (the timeline of a log) becomes partitioned by month like email_logs (0200).
import type { Migration } from '../daemon/db/migrate.ts';
import { partitionTableSql, unpartitionTableSql } from '../daemon/db/partitions.ts';

const INDEXES = `
  CREATE INDEX email_events_email_idx ON email_events (email_id, created_at);
  ALTER TABLE email_events ADD CONSTRAINT email_events_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE`;

export const up: Migration = async ({ context }) => {
  await context.sql(
    await partitionTableSql(
      context.sequelize,
      'email_events',
      `
    ALTER TABLE email_events ADD CONSTRAINT email_events_pkey PRIMARY KEY (id, created_at);
    ${INDEXES}`,
    ),
  );
};

export const down: Migration = async ({ context }) => {
  await context.sql(
    unpartitionTableSql(
      'email_events',
      `
    ALTER TABLE email_events ADD CONSTRAINT email_events_pkey PRIMARY KEY (id);
    ${INDEXES}`,
    ),
  );
};
