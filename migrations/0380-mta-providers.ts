// Provider shaping rules as platform admins set them (issue 29, docs/mta.md "Shaping and reactions").
// The shipped rules live in code (daemon/mta/providers.ts DEFAULT_PROVIDERS); a row here overrides the
// shipped rule of the same key, or adds a provider of the admin's own. Lazily merged by the loader
// (daemon/mta/sql/providers.ts), so a new shipped default reaches databases that never edited it.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE mta_providers (
      key text PRIMARY KEY CHECK (key ~ '^[a-z0-9][a-z0-9-]{0,39}$'),
      label text NOT NULL,
      mx_patterns text[] NOT NULL DEFAULT '{}',
      max_connections int NOT NULL CHECK (max_connections BETWEEN 1 AND 1000),
      max_messages_per_connection int NOT NULL CHECK (max_messages_per_connection BETWEEN 1 AND 100000),
      messages_per_minute int CHECK (messages_per_minute BETWEEN 1 AND 1000000),
      updated_at timestamptz NOT NULL DEFAULT now()
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS mta_providers;`);
};
