// The send pipeline's tables: email logs and their timeline, captured raw messages, idempotency
// answers, and the monthly quota counters (sharded so that concurrent sends do not queue on one row).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE email_logs (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      api_key_id uuid,
      project_id uuid,
      status text NOT NULL DEFAULT 'QUEUED',
      message_id text NOT NULL,
      from_address text NOT NULL,
      to_addresses text[] NOT NULL DEFAULT '{}',
      cc_addresses text[] NOT NULL DEFAULT '{}',
      bcc_addresses text[] NOT NULL DEFAULT '{}',
      reply_to text[] NOT NULL DEFAULT '{}',
      subject text NOT NULL DEFAULT '',
      html_body text,
      text_body text,
      template_version_id uuid,
      data jsonb,
      locale text,
      headers jsonb NOT NULL DEFAULT '{}',
      sent_headers jsonb,
      tags text[] NOT NULL DEFAULT '{}',
      metadata jsonb NOT NULL DEFAULT '{}',
      attachments jsonb NOT NULL DEFAULT '[]',
      track_opens boolean NOT NULL DEFAULT false,
      track_clicks boolean NOT NULL DEFAULT false,
      test_mode boolean NOT NULL DEFAULT false,
      captured boolean NOT NULL DEFAULT false,
      attempts integer NOT NULL DEFAULT 0,
      error text,
      smtp_response text,
      resent_from uuid,
      scheduled_email_id uuid,
      sent_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX email_logs_tenant_idx ON email_logs (tenant_id, created_at DESC);
    CREATE INDEX email_logs_tenant_status_idx ON email_logs (tenant_id, status, created_at DESC);
    CREATE INDEX email_logs_message_id_idx ON email_logs (message_id);

    CREATE TABLE email_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      email_id uuid NOT NULL REFERENCES email_logs(id) ON DELETE CASCADE,
      type text NOT NULL,
      data jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX email_events_email_idx ON email_events (email_id, created_at);

    CREATE TABLE captured_messages (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid REFERENCES tenants(id) ON DELETE CASCADE,
      email_id uuid REFERENCES email_logs(id) ON DELETE CASCADE,
      message_id text NOT NULL,
      envelope_from text,
      envelope_to text[] NOT NULL DEFAULT '{}',
      subject text,
      raw text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX captured_messages_email_idx ON captured_messages (email_id);
    CREATE INDEX captured_messages_created_idx ON captured_messages (created_at DESC);

    CREATE TABLE idempotency_keys (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      key text NOT NULL,
      body_hash text NOT NULL,
      status_code integer,
      response jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, key)
    );
    CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

    CREATE TABLE quota_cycles (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      started_at timestamptz NOT NULL
    );

    CREATE TABLE quota_usage (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      cycle_start timestamptz NOT NULL,
      shard smallint NOT NULL,
      used integer NOT NULL DEFAULT 0,
      PRIMARY KEY (tenant_id, cycle_start, shard)
    );
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(
    `DROP TABLE IF EXISTS quota_usage, quota_cycles, idempotency_keys, captured_messages, email_events, email_logs CASCADE`,
  );
};
