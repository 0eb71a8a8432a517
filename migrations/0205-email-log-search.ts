// Indexes behind the log searches and the live tail:
// - recipient: email_bare_addresses() turns ["Ann <Ann@X.org>", "b@y.org"] into the lower-cased bare
//   addresses {ann@x.org,b@y.org}; a GIN index over that expression answers `to=` with @>, and the
//   insert does not change (the index computes it).
// - tag: GIN over tags (the list's `tag=` filter is tags @> ARRAY[tag]).
// - the live tail reads a tenant's rows by (updated_at, id).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE FUNCTION email_bare_addresses(addresses text[]) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN ARRAY(SELECT lower(btrim(coalesce(substring(a FROM '<([^<>]*)>\\s*$'), a))) FROM unnest(addresses) AS a);
    CREATE INDEX email_logs_recipients_idx ON email_logs USING gin (email_bare_addresses(to_addresses));
    CREATE INDEX email_logs_tags_idx ON email_logs USING gin (tags);
    CREATE INDEX email_logs_tenant_updated_idx ON email_logs (tenant_id, updated_at, id);
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    DROP INDEX IF EXISTS email_logs_tenant_updated_idx, email_logs_tags_idx, email_logs_recipients_idx;
    DROP FUNCTION IF EXISTS email_bare_addresses(text[]);
  `);
};
