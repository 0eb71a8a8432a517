// Sending domains: one row per domain per tenant, with its DKIM key (private part sealed) and the
// state of each DNS record after the last check.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE domains (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified', 'failed')),
      dkim_selector text NOT NULL,
      dkim_public_key text NOT NULL,
      dkim_private_key_sealed text NOT NULL,
      record_checks jsonb NOT NULL DEFAULT '{}',
      verified_at timestamptz,
      last_checked_at timestamptz,
      drift_detected_at timestamptz,
      drift jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX domains_tenant_name_key ON domains (tenant_id, name);
    CREATE INDEX domains_recheck_idx ON domains (status, last_checked_at);
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS domains;`);
};
