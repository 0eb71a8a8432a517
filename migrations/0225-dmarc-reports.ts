// DMARC aggregate reports (RFC 7489 §7.2) received at the service's rua address, one row per report
// and domain it was stored for. A reporter that sends the same report twice is stored once.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE dmarc_reports (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      domain_id uuid NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
      org_name text NOT NULL,
      org_email text,
      report_id text NOT NULL,
      date_begin timestamptz NOT NULL,
      date_end timestamptz NOT NULL,
      policy jsonb NOT NULL DEFAULT '{}',
      received_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX dmarc_reports_once ON dmarc_reports (domain_id, org_name, report_id);
    CREATE INDEX dmarc_reports_domain_recent ON dmarc_reports (domain_id, date_end DESC);`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS dmarc_reports;`);
};
