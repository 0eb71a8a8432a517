// email_logs becomes partitioned by month of created_at (daemon/db/partitions.ts) so that retention
// is a partition drop. A partitioned table's primary key must hold the partition key: (id, created_at).
// Lookups by id alone still use that index (one probe per partition). Foreign keys into email_logs
// (email_events.email_id, captured_messages.email_id) go: PostgreSQL would need (id, created_at) in
// them; those rows expire by the same retention instead of by cascade. Every row is copied.
import type { Migration } from '../daemon/db/migrate.ts';
import { partitionTableSql, unpartitionTableSql } from '../daemon/db/partitions.ts';

const INDEXES = `
  CREATE INDEX email_logs_tenant_idx ON email_logs (tenant_id, created_at DESC);
  CREATE INDEX email_logs_tenant_status_idx ON email_logs (tenant_id, status, created_at DESC);
  CREATE INDEX email_logs_message_id_idx ON email_logs (message_id);
  ALTER TABLE email_logs ADD CONSTRAINT email_logs_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE`;

export const up: Migration = async ({ context }) => {
  await context.sql(
    await partitionTableSql(
      context.sequelize,
      'email_logs',
      `
    ALTER TABLE email_logs ADD CONSTRAINT email_logs_pkey PRIMARY KEY (id, created_at);
    ${INDEXES}`,
    ),
  );
};

export const down: Migration = async ({ context }) => {
  // NOT VALID: rows whose log expired under retention may remain in the child tables.
  await context.sql(
    unpartitionTableSql(
      'email_logs',
      `
    ALTER TABLE email_logs ADD CONSTRAINT email_logs_pkey PRIMARY KEY (id);
    ${INDEXES};
    ALTER TABLE email_events ADD CONSTRAINT email_events_email_id_fkey FOREIGN KEY (email_id) REFERENCES email_logs(id) ON DELETE CASCADE NOT VALID;
    ALTER TABLE captured_messages ADD CONSTRAINT captured_messages_email_id_fkey FOREIGN KEY (email_id) REFERENCES email_logs(id) ON DELETE CASCADE NOT VALID`,
    ),
  );
};
