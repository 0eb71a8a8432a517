// What bounce and complaint reports did, so that each (send, recipient) counts once and a report that
// cannot be tied to a recipient of its send changes nothing but is kept for platform admins:
// - recipient_outcomes: one row per (send, recipient, kind). A replayed DSN or ARF finds its row and
//   adds no event, webhook, suppression or count; the sending-risk rates count distinct recipients here.
// - inbound_reports: reports kept without effect, `unmatched` (names no recipient the send went to, or
//   no send at all) or `unverified` (an ARF at fbl@ without a valid DKIM signature of a listed
//   feedback-loop operator), with why.
// - tenants.sending_at_risk_*: the warning given before a pause, with the numbers behind it.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE recipient_outcomes (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      email_id uuid NOT NULL,
      recipient text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('hard_bounce', 'soft_bounce', 'undelivered', 'complaint')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (email_id, recipient, kind)
    );
    CREATE INDEX recipient_outcomes_tenant_recent ON recipient_outcomes (tenant_id, created_at DESC);
    CREATE TABLE inbound_reports (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      disposition text NOT NULL CHECK (disposition IN ('unmatched', 'unverified')),
      kind text NOT NULL CHECK (kind IN ('bounce', 'complaint')),
      source text NOT NULL,
      reason text NOT NULL,
      tenant_id uuid REFERENCES tenants(id) ON DELETE CASCADE,
      email_id uuid,
      reporter text,
      recipients text[] NOT NULL DEFAULT '{}',
      message_ids text[] NOT NULL DEFAULT '{}',
      received_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX inbound_reports_recent ON inbound_reports (disposition, received_at DESC);
    ALTER TABLE tenants ADD COLUMN sending_at_risk_at timestamptz, ADD COLUMN sending_at_risk_reason text;`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE tenants DROP COLUMN IF EXISTS sending_at_risk_reason, DROP COLUMN IF EXISTS sending_at_risk_at;
    DROP TABLE IF EXISTS inbound_reports;
    DROP TABLE IF EXISTS recipient_outcomes;`);
};
