// What a spooled send's log records of its attempt (the headers that went out, the attempt's number, a
// template's rendered content) waits in its spool rows and is written with the log's first outcome
// (emails/sql/spooled-log.ts): the log is updated once per delivery instead of twice. Every update of
// email_logs changes an indexed column (status, updated_at), so none is HOT: each writes a new row
// version and an entry in each of its indexes, the recipients' GIN index among them (docs/mta.md,
// "One write of the log per delivery"). Rows spooled before this keep their log as it was written then
// (log_created_at null: nothing to apply).
import type { Migration } from '../daemon/db/migrate.ts';
import { lz4Available } from '../daemon/db/toast-compression.ts';

export const up: Migration = async ({ context }) => {
  // As the other large values (migration 0410): lz4 where this PostgreSQL has it.
  const compression = (await lz4Available(context.sequelize)) ? ' COMPRESSION lz4' : '';
  await context.sql(`
    ALTER TABLE mta_spool
      ADD COLUMN log_created_at timestamptz,
      ADD COLUMN log_attempt int,
      ADD COLUMN log_sent_headers text${compression},
      ADD COLUMN log_subject text,
      ADD COLUMN log_html text${compression},
      ADD COLUMN log_text text${compression};`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE mta_spool
      DROP COLUMN IF EXISTS log_created_at, DROP COLUMN IF EXISTS log_attempt, DROP COLUMN IF EXISTS log_sent_headers,
      DROP COLUMN IF EXISTS log_subject, DROP COLUMN IF EXISTS log_html, DROP COLUMN IF EXISTS log_text;`);
};
