// Each node records its DELIVERY (relay or direct) beside its role: a setting that only direct delivery
// applies (per-tenant throttles, modules/shaping/throttle-delivery.ts) is refused while worker nodes
// relay, and the API node that answers may not be one of them. Null: a node started before this.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE daemon_nodes ADD COLUMN delivery text;`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`ALTER TABLE daemon_nodes DROP COLUMN IF EXISTS delivery;`);
};
