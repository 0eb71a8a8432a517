// Projects group a tenant's sends; a project may bring its own SMTP relay (password sealed at rest).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE projects (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      smtp_host text,
      smtp_port integer,
      smtp_secure boolean NOT NULL DEFAULT false,
      smtp_user text,
      smtp_pass_sealed text,
      smtp_verified_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX projects_tenant_idx ON projects (tenant_id, created_at DESC);
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS projects CASCADE');
};
