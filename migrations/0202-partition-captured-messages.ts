// captured_messages (raw messages of test keys and the capture transport) becomes partitioned by
// month, so that the raw-message retention is a partition drop.
import type { Migration } from '../daemon/db/migrate.ts';
import { partitionTableSql, unpartitionTableSql } from '../daemon/db/partitions.ts';

const INDEXES = `
  CREATE INDEX captured_messages_email_idx ON captured_messages (email_id);
  CREATE INDEX captured_messages_created_idx ON captured_messages (created_at DESC);
  ALTER TABLE captured_messages ADD CONSTRAINT captured_messages_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE`;

export const up: Migration = async ({ context }) => {
  await context.sql(
    await partitionTableSql(
      context.sequelize,
      'captured_messages',
      `
    ALTER TABLE captured_messages ADD CONSTRAINT captured_messages_pkey PRIMARY KEY (id, created_at);
    ${INDEXES}`,
    ),
  );
};

export const down: Migration = async ({ context }) => {
  await context.sql(
    unpartitionTableSql(
      'captured_messages',
      `
    ALTER TABLE captured_messages ADD CONSTRAINT captured_messages_pkey PRIMARY KEY (id);
    ${INDEXES}`,
    ),
  );
};
