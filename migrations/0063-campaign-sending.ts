// What a campaign send did: the sender, when it finished, how many messages were accepted or refused,
// and the sentence of the failure that stopped it.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE campaigns
      ADD COLUMN from_address text,
      ADD COLUMN sent_at timestamptz,
      ADD COLUMN accepted_count integer NOT NULL DEFAULT 0,
      ADD COLUMN rejected_count integer NOT NULL DEFAULT 0,
      ADD COLUMN last_error text;
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE campaigns DROP COLUMN from_address, DROP COLUMN sent_at, DROP COLUMN accepted_count,
      DROP COLUMN rejected_count, DROP COLUMN last_error;
  `);
};
