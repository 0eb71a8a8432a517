// TLS-RPT counts (RFC 8460, docs/mta.md): the MTA loop adds each batch's TLS sessions here in its
// commit, one row per (UTC day, policy, MX host, addresses, result); result_type '' is a success.
// The daily job (mta/tls-report-job.ts) turns a finished day's rows into one report per policy domain.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE tls_report_counts (
      day date NOT NULL,
      policy_domain text NOT NULL,
      policy_type text NOT NULL CHECK (policy_type IN ('sts', 'tlsa', 'no-policy-found')),
      -- md5 of policy_strings: the key part, so that a long policy text stays out of the index.
      policy_hash text NOT NULL,
      policy_strings jsonb NOT NULL,
      mx_host text NOT NULL,
      sending_ip text NOT NULL DEFAULT '',
      receiving_ip text NOT NULL DEFAULT '',
      result_type text NOT NULL DEFAULT '',
      sessions bigint NOT NULL,
      PRIMARY KEY (day, policy_domain, policy_type, policy_hash, mx_host, sending_ip, receiving_ip, result_type)
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS tls_report_counts;`);
};
