// Tenant-scoped search keys for the recipient and tag searches of GET /emails/logs (issue 27).
// The GIN indexes of 0205 held bare addresses and tags of every tenant: a search had to add
// `tenant_id = …`, and on a partition without statistics the planner ANDed the recipient bitmap
// with a walk of the tenant's whole (tenant_id, …) index (1,000,000 entries for one match), or
// preferred the (tenant_id, created_at) walk for ORDER BY … LIMIT. Here each key carries its
// tenant ("<tenant id>:<address>", "<tenant id>:<tag>"), so the key alone selects the tenant's
// matches and no other index can serve the condition: the plan is the key index's, by its form
// (log-queries.ts). The old indexes go (nothing else reads them), so an insert still maintains two
// GIN indexes. CREATE INDEX on a partitioned table builds it on every partition, holding a SHARE
// lock on each while it does (about 45 s per 1,000,000 logs on a 2-core machine).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE FUNCTION email_log_recipient_keys(tenant uuid, addresses text[]) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN ARRAY(SELECT tenant::text || ':' || a FROM unnest(email_bare_addresses(addresses)) AS a);
    CREATE FUNCTION email_log_tag_keys(tenant uuid, tags text[]) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN ARRAY(SELECT tenant::text || ':' || t FROM unnest(tags) AS t);
    CREATE INDEX email_logs_recipient_keys_idx ON email_logs USING gin (email_log_recipient_keys(tenant_id, to_addresses));
    CREATE INDEX email_logs_tag_keys_idx ON email_logs USING gin (email_log_tag_keys(tenant_id, tags));
    DROP INDEX IF EXISTS email_logs_recipients_idx, email_logs_tags_idx;
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    CREATE INDEX email_logs_recipients_idx ON email_logs USING gin (email_bare_addresses(to_addresses));
    CREATE INDEX email_logs_tags_idx ON email_logs USING gin (tags);
    DROP INDEX IF EXISTS email_logs_recipient_keys_idx, email_logs_tag_keys_idx;
    DROP FUNCTION IF EXISTS email_log_recipient_keys(uuid, text[]), email_log_tag_keys(uuid, text[]);
  `);
};
