// Campaigns. template_id has no foreign key: templates are another area's table; the service checks
// that the template is the tenant's when the campaign is created.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE campaigns (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      template_id uuid NOT NULL,
      audience jsonb NOT NULL DEFAULT '{}',
      status text NOT NULL CHECK (status IN ('DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELLED')),
      send_at timestamptz,
      cancelled_at timestamptz,
      created_by uuid REFERENCES admins(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX campaigns_tenant_created_idx ON campaigns (tenant_id, created_at DESC);
    CREATE INDEX campaigns_due_idx ON campaigns (send_at) WHERE status = 'SCHEDULED';
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS campaigns CASCADE');
};
