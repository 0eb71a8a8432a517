// Which secret sealed this database: a key-check value (an HMAC under a key derived from the secret,
// never the secret), written by the first daemon to boot. Every later node compares its own, so a
// node started with another JWT_SECRET (or a lost DATA_DIR that generated a new one) refuses to boot
// instead of failing every DKIM signature and token later.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE platform_secrets_check (
      id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
      check_value text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS platform_secrets_check`);
};
