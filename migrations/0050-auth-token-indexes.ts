// Look-ups the auth area makes often: an admin's unused one-time tokens (a new reset link retires
// the older ones) and pruning by expiry.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE INDEX auth_tokens_admin_purpose_idx ON auth_tokens (admin_id, purpose) WHERE used_at IS NULL;
    CREATE INDEX auth_tokens_expires_idx ON auth_tokens (expires_at);
    CREATE INDEX refresh_tokens_expires_idx ON refresh_tokens (expires_at);
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    DROP INDEX IF EXISTS refresh_tokens_expires_idx;
    DROP INDEX IF EXISTS auth_tokens_expires_idx;
    DROP INDEX IF EXISTS auth_tokens_admin_purpose_idx;
  `);
};
