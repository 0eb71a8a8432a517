// Which pool a tenant's mail leaves from: a tenant default (project and stream null), optionally a
// pool per project and per stream (transactional or campaign). The most specific assignment wins
// (daemon/mta/source-address.ts); one assignment per (tenant, project, stream).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE ip_pool_assignments (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      pool_id uuid NOT NULL REFERENCES ip_pools(id) ON DELETE CASCADE,
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      project_id uuid REFERENCES projects(id) ON DELETE CASCADE,
      stream text CHECK (stream IN ('transactional', 'campaign')),
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX ip_pool_assignments_scope ON ip_pool_assignments
      (tenant_id, COALESCE(project_id, '00000000-0000-0000-0000-000000000000'::uuid), COALESCE(stream, ''));
    CREATE INDEX ip_pool_assignments_pool ON ip_pool_assignments (pool_id);`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS ip_pool_assignments;`);
};
