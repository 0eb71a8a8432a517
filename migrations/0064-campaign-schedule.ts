// A scheduled campaign is sent by the maintenance worker with no request around it: it keeps the
// sender given at creation and whether it was created with a test key (whose mail is only captured).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE campaigns ADD COLUMN test_mode boolean NOT NULL DEFAULT false`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE campaigns DROP COLUMN test_mode`);
};
