// One row per (UTC day, policy domain) whose TLS report a daemon took on: inserted once, leased by
// the daemon that sends (claimed_by, claimed_until), finished_at once it went out. Two daemons on one
// database send each report once; a daemon that died mid-send leaves a lease the next one takes over.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE tls_report_sends (
      day date NOT NULL,
      policy_domain text NOT NULL,
      claimed_by text NOT NULL,
      claimed_until timestamptz NOT NULL,
      report_id text,
      -- Per rua address: delivered (POSTed, or queued as system mail) or why not.
      outcome jsonb,
      finished_at timestamptz,
      PRIMARY KEY (day, policy_domain)
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS tls_report_sends;`);
};
