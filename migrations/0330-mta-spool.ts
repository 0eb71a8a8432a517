// The outbound MTA's spool (issue 28, docs/mta.md): one row per message per destination domain, so a
// message to two domains is two rows that are leased, tried and deferred apart. The unique
// (email_id, domain) makes the transport target's insert idempotent: a send job that runs again after
// a crash spools nothing twice.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE mta_spool (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      -- Null for system mail (invitations, sign-in codes): no tenant, no log to record outcomes in.
      tenant_id uuid REFERENCES tenants(id) ON DELETE CASCADE,
      email_id uuid,
      domain text NOT NULL,
      recipients jsonb NOT NULL,
      envelope_from text NOT NULL,
      message bytea NOT NULL,
      state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'leased', 'deferred', 'held', 'done')),
      attempts int NOT NULL DEFAULT 0,
      run_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      lease_owner text,
      lease_until timestamptz,
      data_sent_at timestamptz,
      last_response text,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (email_id, domain)
    );
    CREATE INDEX mta_spool_due ON mta_spool (run_at, domain) WHERE state IN ('queued', 'deferred');
    CREATE INDEX mta_spool_leased ON mta_spool (lease_until) WHERE state = 'leased';
    CREATE INDEX mta_spool_tenant ON mta_spool (tenant_id, domain);`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS mta_spool;`);
};
