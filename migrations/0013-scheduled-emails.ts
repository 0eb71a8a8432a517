// Sends asked for a future time. The row keeps the request; a 'scheduled' job keyed by the row id
// runs it at send_at through the normal pipeline (quota is checked then, not now).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE scheduled_emails (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      api_key_id uuid,
      admin_id uuid,
      test_mode boolean NOT NULL DEFAULT false,
      status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'SENT', 'FAILED', 'CANCELLED')),
      send_at timestamptz NOT NULL,
      timezone text NOT NULL,
      payload jsonb NOT NULL,
      email_id uuid,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX scheduled_emails_tenant_idx ON scheduled_emails (tenant_id, status, send_at);
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS scheduled_emails CASCADE');
};
