// The daemons that share this database, each refreshing its row while it runs: `svc doctor` needs
// to know when more than one node is up (rate limits must then live in Redis) and which roles run.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE daemon_nodes (
      id text PRIMARY KEY,
      hostname text NOT NULL,
      pid integer NOT NULL,
      role text NOT NULL,
      redis boolean NOT NULL,
      started_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX daemon_nodes_last_seen ON daemon_nodes (last_seen_at);`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS daemon_nodes;`);
};
