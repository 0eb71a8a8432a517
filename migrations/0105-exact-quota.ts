// The quota becomes one counter row per tenant and cycle (shard 0), reserved exactly by the accept
// statement; the sharded rows of each cycle are folded into it.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    INSERT INTO quota_usage (tenant_id, cycle_start, shard, used)
    SELECT tenant_id, cycle_start, 0, SUM(used) FROM quota_usage GROUP BY tenant_id, cycle_start
    ON CONFLICT (tenant_id, cycle_start, shard) DO UPDATE SET used = EXCLUDED.used;
    DELETE FROM quota_usage WHERE shard <> 0;`);
};

// Shard 0 alone is a valid sharded state: nothing to undo.
export const down: Migration = async () => {};
