// The event outbox: every state change that customers may hear about is one row, written in the
// same transaction as the change. The webhook area fans rows out to endpoints.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      type text NOT NULL,
      email_id uuid,
      data jsonb NOT NULL DEFAULT '{}',
      fanned_out_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX events_tenant_idx ON events (tenant_id, created_at DESC);
    CREATE INDEX events_email_idx ON events (email_id, created_at) WHERE email_id IS NOT NULL;
    CREATE INDEX events_pending_fanout_idx ON events (created_at) WHERE fanned_out_at IS NULL;
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS events CASCADE');
};
