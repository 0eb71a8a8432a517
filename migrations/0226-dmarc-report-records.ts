// The rows of a DMARC aggregate report: one per sending source (IP) and result combination, with
// what the receiver did (disposition) and how DKIM and SPF fared, raw and aligned with the From domain.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE dmarc_report_records (
      id bigserial PRIMARY KEY,
      report_id uuid NOT NULL REFERENCES dmarc_reports(id) ON DELETE CASCADE,
      source_ip text NOT NULL,
      message_count integer NOT NULL,
      disposition text NOT NULL,
      header_from text,
      dkim_aligned boolean NOT NULL,
      spf_aligned boolean NOT NULL,
      dkim_domain text,
      dkim_result text,
      spf_domain text,
      spf_result text
    );
    CREATE INDEX dmarc_report_records_report ON dmarc_report_records (report_id);`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS dmarc_report_records;`);
};
