// Campaign sends as durable work (issue 21). The campaign row carries the expansion's position
// (the id of the last contact handed to the send pipeline), written in the same transaction as
// that chunk's sends, so a worker killed at any point resumes exactly after the last committed
// chunk. It also keeps who started the send (the API key the logs are attributed to), the audience
// size when the send started (progress), and how many queued sends a cancel took back.
//
// The audience indexes: campaigns walk opted-in contacts of one tenant in id order, optionally
// narrowed to a locale or a project; locale coverage groups the same rows by lower(locale). Each
// is served by a partial index on opted-in contacts (EXPLAIN in docs/lists.md).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE campaigns
      ADD COLUMN expansion_cursor uuid,
      ADD COLUMN audience_total integer,
      ADD COLUMN cancelled_count integer NOT NULL DEFAULT 0,
      ADD COLUMN started_at timestamptz,
      ADD COLUMN api_key_id uuid;
    CREATE INDEX contacts_audience_idx ON contacts (tenant_id, id) WHERE opt_in;
    CREATE INDEX contacts_audience_locale_idx ON contacts (tenant_id, lower(locale), id) WHERE opt_in;
    CREATE INDEX contacts_audience_project_idx ON contacts (tenant_id, project_id, id) WHERE opt_in;
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    DROP INDEX IF EXISTS contacts_audience_idx;
    DROP INDEX IF EXISTS contacts_audience_locale_idx;
    DROP INDEX IF EXISTS contacts_audience_project_idx;
    ALTER TABLE campaigns DROP COLUMN expansion_cursor, DROP COLUMN audience_total, DROP COLUMN cancelled_count,
      DROP COLUMN started_at, DROP COLUMN api_key_id;
  `);
};
