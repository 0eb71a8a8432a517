// The resolver's health per node (table mta_resolver_health, migration 0455; mta/resolver-health.ts):
// the MTA thread writes each check, the queue view and /metrics read every node's row.
import { declare, type Sql } from '../../db/sql.ts';
import type { ResolverState } from '../resolver-health.ts';

const RECORD_RESOLVER_HEALTH = declare(
  'mta_resolver_health_record',
  `
  INSERT INTO mta_resolver_health (node, healthy, since, last_error, canaries, checked_at)
  VALUES ($1, $2, $3, $4, $5::text[], $6)
  ON CONFLICT (node) DO UPDATE
     SET healthy = EXCLUDED.healthy, since = EXCLUDED.since, last_error = EXCLUDED.last_error,
         canaries = EXCLUDED.canaries, checked_at = EXCLUDED.checked_at`,
);

const READ_RESOLVER_HEALTH = declare(
  'mta_resolver_health_read',
  `SELECT node, healthy, since, last_error, canaries, checked_at FROM mta_resolver_health ORDER BY node`,
);

/** One node's resolver as its MTA thread last checked it. */
export interface NodeResolverHealth extends ResolverState {
  node: string;
  canaries: string[];
}

export async function recordResolverHealth(
  sql: Sql,
  node: string,
  canaries: string[],
  state: ResolverState,
): Promise<void> {
  await sql.count(RECORD_RESOLVER_HEALTH, [
    node,
    state.healthy,
    state.since,
    state.lastError,
    canaries,
    state.checkedAt,
  ]);
}

/** Every node's resolver health, by node name (/platform/queue, /metrics). */
export async function readResolverHealth(sql: Sql): Promise<NodeResolverHealth[]> {
  const rows = await sql.rows<{
    node: string;
    healthy: boolean;
    since: Date;
    last_error: string | null;
    canaries: string[];
    checked_at: Date;
  }>(READ_RESOLVER_HEALTH, []);
  return rows.map((row) => ({
    node: row.node,
    healthy: row.healthy,
    since: row.since,
    lastError: row.last_error,
    canaries: row.canaries,
    checkedAt: row.checked_at,
  }));
}
