// A template's own sender (issue 49 §5): `from:` in a template file's front-matter, or `from` on create
// and update, is the sender of a send-template or batch by slug that names none.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE templates ADD COLUMN default_from text;`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE templates DROP COLUMN IF EXISTS default_from;`);
};
