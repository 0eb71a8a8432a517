// One row per invitation mail sent, for the daily caps (platform settings invitationsPerTenantPerDay and
// invitationsPerPlatformPerDay; daemon/modules/tenants/invitation-limits.ts). Not the invitations table:
// a re-invitation replaces its pending row, and deleting a tenant cascades to its invitations, and
// neither may reset a count. No foreign keys for the same reason; rows older than a day are deleted as
// new ones are written.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE invitation_sends (
      tenant_id uuid NOT NULL,
      invited_by uuid,
      sent_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX invitation_sends_tenant_idx ON invitation_sends (tenant_id, sent_at);
    CREATE INDEX invitation_sends_sent_idx ON invitation_sends (sent_at);`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS invitation_sends;`);
};
