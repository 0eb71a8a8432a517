// What the MTA loop needs to pick a row's IP pool (tenant, project, stream) without reading the email
// log: the project and the stream (a campaign's sends, or transactional mail) are stored at spool time.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE mta_spool
      ADD COLUMN project_id uuid,
      ADD COLUMN stream text NOT NULL DEFAULT 'transactional' CHECK (stream IN ('transactional', 'campaign'));`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE mta_spool DROP COLUMN project_id, DROP COLUMN stream;`);
};
