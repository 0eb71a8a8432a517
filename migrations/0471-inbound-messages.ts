// Messages taken by an inbound route (issue 52): one row per routed recipient, written with the raw
// source (gzipped in the reader thread) before the SMTP 250, in the transaction of its webhook
// delivery. Partitioned by month like the other history tables, so the retention task drops a month at
// once; the search columns (sender, recipient, subject) are plain columns beside the parsed JSON.
// inbound_attachments holds the content of attachments too large to travel inline, fetched by the
// signed URL the webhook carries; it is the monthly companion of inbound_messages (same months).
import type { Migration } from '../daemon/db/migrate.ts';
import { addMonths, createPartitionSql, MONTHS_AHEAD, monthOf } from '../daemon/db/partitions.ts';

function partitionsSql(table: string): string {
  const months = Array.from({ length: MONTHS_AHEAD + 1 }, (_, i) => addMonths(monthOf(new Date()), i));
  return [
    ...months.map((m) => createPartitionSql(table, m)),
    `CREATE TABLE ${table}_default PARTITION OF ${table} DEFAULT`,
  ].join(';\n');
}

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE inbound_messages (
      id uuid NOT NULL DEFAULT gen_random_uuid(),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      route_id uuid REFERENCES inbound_routes(id) ON DELETE SET NULL,
      action text NOT NULL,
      status text NOT NULL CHECK (status IN ('received', 'delivered', 'failed', 'stored', 'forwarded')),
      mail_from text,
      recipient text NOT NULL,
      mailbox_hash text,
      client_ip text,
      from_address text,
      subject text,
      message_id text,
      size integer NOT NULL,
      raw_gzip bytea NOT NULL,
      parsed jsonb NOT NULL,
      reply_email_id uuid,
      reply_message_id text,
      event_id uuid,
      error text,
      PRIMARY KEY (id, created_at)
    ) PARTITION BY RANGE (created_at);
    ${partitionsSql('inbound_messages')};
    CREATE INDEX inbound_messages_tenant_idx ON inbound_messages (tenant_id, created_at DESC, id DESC);
    CREATE INDEX inbound_messages_recipient_idx ON inbound_messages (tenant_id, lower(recipient), created_at DESC);
    CREATE INDEX inbound_messages_route_idx ON inbound_messages (tenant_id, route_id, created_at DESC);
    CREATE INDEX inbound_messages_event_idx ON inbound_messages (event_id) WHERE event_id IS NOT NULL;
    ALTER TABLE inbound_messages ALTER COLUMN raw_gzip SET STORAGE EXTERNAL;

    CREATE TABLE inbound_attachments (
      id uuid NOT NULL DEFAULT gen_random_uuid(),
      created_at timestamptz NOT NULL,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      inbound_id uuid NOT NULL,
      sha256 text NOT NULL,
      content bytea NOT NULL,
      PRIMARY KEY (id, created_at)
    ) PARTITION BY RANGE (created_at);
    ${partitionsSql('inbound_attachments')};
    CREATE INDEX inbound_attachments_message_idx ON inbound_attachments (inbound_id, sha256);`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS inbound_attachments, inbound_messages;`);
};
