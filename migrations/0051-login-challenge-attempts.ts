// Wrong 2FA codes per login challenge: after a few the challenge dies and the password is needed
// again, so guessing is bounded per challenge and not only per address.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE auth_tokens ADD COLUMN attempts integer NOT NULL DEFAULT 0;`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE auth_tokens DROP COLUMN IF EXISTS attempts;`);
};
