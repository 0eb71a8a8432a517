// Source addresses a node could not bind when delivering (EADDRNOTAVAIL: the address is on no interface of
// that host), one row per node and address, written by the MTA thread (mta/source-faults.ts) and shown
// as an operator alert in GET /platform/queue and `svc queue`; the row goes when the address binds again.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE mta_source_faults (
      node text NOT NULL,
      ip text NOT NULL,
      reason text NOT NULL,
      since timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (node, ip)
    );`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS mta_source_faults;`);
};
