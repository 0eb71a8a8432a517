// A log's tags as rows of their own, `email_log_tags (tenant_id, tag, created_at, id)`, for the tag
// search of GET /emails/logs (issue 27). The GIN key of 0310 answered "which logs have this tag" in
// no order: a page of a tag in a time range at 10,000,000 logs either walked the tenant's newest rows
// filtering for the tag (up to 10,000 cold rows, 64.5 ms at p99) or ANDed the tag's bitmap with the
// range's (41 ms). The btree of this table answers "this tenant's logs of this tag, newest first,
// in this range" by walking exactly the page's entries. It is partitioned by the same months as
// email_logs (its partitions are created and dropped with theirs, daemon/db/partitions.ts), written by
// the one INSERT of new logs (emails/sql/insert-logs.ts) and its rows deleted with their logs'
// (retention/enforce.ts). The tag's GIN index goes: an accept maintains a btree entry per tag instead.
// The copy of existing tags reads every log once, in one statement: on a large history, run it in a
// maintenance window (its time at scale was not measured).
import { QueryTypes } from 'sequelize';
import type { Migration } from '../daemon/db/migrate.ts';
import {
  createPartitionSql,
  listPartitions,
  monthOfPartition,
  turnOffGinPendingLists,
} from '../daemon/db/partitions.ts';
import { logTagRowsSql } from '../daemon/modules/emails/sql/insert-logs.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE email_log_tags (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      tag text NOT NULL,
      created_at timestamptz NOT NULL,
      id uuid NOT NULL,
      PRIMARY KEY (tenant_id, tag, created_at, id)
    ) PARTITION BY RANGE (created_at);
    CREATE TABLE email_log_tags_default PARTITION OF email_log_tags DEFAULT;
  `);
  for (const name of await listPartitions(context.sequelize, 'email_logs')) {
    const month = monthOfPartition(name);
    if (month) await context.sql(createPartitionSql('email_log_tags', month));
  }
  await context.sql(`
    INSERT INTO email_log_tags (tenant_id, tag, created_at, id) ${logTagRowsSql('email_logs')};
    DROP INDEX IF EXISTS email_logs_tag_keys_idx;
    DROP FUNCTION IF EXISTS email_log_tag_keys(uuid, text[]);
  `);
  await context.sequelize.query('ANALYZE email_log_tags', { type: QueryTypes.RAW });
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    CREATE FUNCTION email_log_tag_keys(tenant uuid, tags text[]) RETURNS text[]
      LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
      RETURN ARRAY(SELECT tenant::text || ':' || t FROM unnest(tags) AS t);
    CREATE INDEX email_logs_tag_keys_idx ON email_logs USING gin (email_log_tag_keys(tenant_id, tags));
    DROP TABLE IF EXISTS email_log_tags;
  `);
  await turnOffGinPendingLists(context.sequelize);
};
