// Retention removes the bodies of a log (html, text, template data, attachment contents) before
// the log itself: bodies_removed_at says when, so a resend can refuse instead of sending an empty
// mail, and the partial index finds the logs whose bodies are still there, oldest first.
// A nullable column without default: no table rewrite.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE email_logs ADD COLUMN bodies_removed_at timestamptz;
    CREATE INDEX email_logs_bodies_kept_idx ON email_logs (created_at) WHERE bodies_removed_at IS NULL;
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    DROP INDEX IF EXISTS email_logs_bodies_kept_idx;
    ALTER TABLE email_logs DROP COLUMN IF EXISTS bodies_removed_at;
  `);
};
