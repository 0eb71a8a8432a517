// Invitations of addresses that have no account yet: the invitee registers with the token from the
// mail and joins the tenant with the invited role. The token is stored only as its SHA-256 hash,
// works once and expires; a new invitation of the same address to the same tenant replaces the old.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE invitations (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      email text NOT NULL,
      role text NOT NULL CHECK (role IN ('viewer', 'developer', 'admin', 'owner')),
      token_hash text NOT NULL UNIQUE,
      invited_by uuid REFERENCES admins(id) ON DELETE SET NULL,
      expires_at timestamptz NOT NULL,
      accepted_at timestamptz,
      accepted_by uuid REFERENCES admins(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX invitations_pending_idx ON invitations (tenant_id, email) WHERE accepted_at IS NULL;
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS invitations`);
};
