// The MTA loop's statements on IP pools (migrations 0370–0375, docs/mta.md "IP pools and warm-up"):
// which pool a row leaves from, a pool's addresses and schedule with today's counts, and the batched
// count upsert that goes into the loop's commit transaction.
import { declare, type BoundStatement, type Sql } from '../../db/sql.ts';
import type { WarmupSchedule } from '../../../shared/schemas/ip-pools.ts';

/** NOTIFY channel of pool changes: every MTA loop drops what it cached of pools (mta/source-address.ts). */
export const IP_POOLS_CHANNEL = 'svc_ip_pools';

// The most specific assignment: project and stream, then project, then stream, then the tenant's default.
const POOL_OF = declare(
  'ip_pool_of',
  `SELECT pool_id::text AS pool_id FROM ip_pool_assignments
    WHERE tenant_id = $1 AND (project_id IS NULL OR project_id = $2) AND (stream IS NULL OR stream = $3)
    ORDER BY (project_id IS NOT NULL) DESC, (stream IS NOT NULL) DESC
    LIMIT 1`,
);

const POOL_ADDRESSES = declare(
  'ip_pool_addresses_of',
  `SELECT p.warmup_schedule, a.id::text AS id, a.ip, a.ehlo_name, a.weight, a.warmup_started_at
     FROM ip_pools p LEFT JOIN ip_pool_addresses a ON a.pool_id = p.id
    WHERE p.id = $1
    ORDER BY a.created_at, a.ip`,
);

const DAY_COUNTS = declare(
  'ip_warmup_counts_of_day',
  `SELECT address_id::text AS address_id, provider, sent FROM ip_warmup_counts
    WHERE address_id = ANY($1::uuid[]) AND day = $2::date`,
);

const ADD_COUNTS = declare(
  'ip_warmup_counts_add',
  `INSERT INTO ip_warmup_counts (address_id, provider, day, sent)
   SELECT * FROM unnest($1::uuid[], $2::text[], $3::date[], $4::int[])
   ON CONFLICT (address_id, day, provider) DO UPDATE SET sent = ip_warmup_counts.sent + EXCLUDED.sent`,
);

export interface PoolAddressRow {
  id: string;
  ip: string;
  ehloName: string;
  weight: number;
  warmupStartedAt: Date | null;
}

export interface PoolRows {
  /** Null: the pool has no schedule of its own. */
  schedule: WarmupSchedule | null;
  addresses: PoolAddressRow[];
}

export async function poolOfRow(
  sql: Sql,
  tenantId: string,
  projectId: string | null,
  stream: string,
): Promise<string | null> {
  const [row] = await sql.rows<{ pool_id: string }>(POOL_OF, [tenantId, projectId, stream]);
  return row?.pool_id ?? null;
}

/** The pool's addresses and schedule; null when the pool no longer exists. */
export async function readPoolRows(sql: Sql, poolId: string): Promise<PoolRows | null> {
  const rows = await sql.rows<{
    warmup_schedule: WarmupSchedule | null;
    id: string | null;
    ip: string;
    ehlo_name: string;
    weight: number;
    warmup_started_at: Date | null;
  }>(POOL_ADDRESSES, [poolId]);
  if (rows.length === 0) return null;
  return {
    schedule: rows[0].warmup_schedule,
    addresses: rows
      .filter((row) => row.id !== null)
      .map((row) => ({
        id: row.id!,
        ip: row.ip,
        ehloName: row.ehlo_name,
        weight: row.weight,
        warmupStartedAt: row.warmup_started_at,
      })),
  };
}

/** Sent counts of `day` by `${addressId}|${provider}`. */
export async function readDayCounts(sql: Sql, addressIds: string[], day: string): Promise<Map<string, number>> {
  const rows = await sql.rows<{ address_id: string; provider: string; sent: number }>(DAY_COUNTS, [addressIds, day]);
  return new Map(rows.map((row) => [`${row.address_id}|${row.provider}`, row.sent]));
}

export interface CountIncrement {
  addressId: string;
  provider: string;
  day: string;
  sent: number;
}

/**
 * The count statement and its values, for the caller's transaction (the loop's batch commit). Adds
 * of one key are summed first: one upsert may not touch a row twice.
 */
export function addCountsStatement(increments: CountIncrement[]): BoundStatement | null {
  const summed = new Map<string, CountIncrement>();
  for (const increment of increments) {
    if (increment.sent <= 0) continue;
    const key = `${increment.addressId}|${increment.provider}|${increment.day}`;
    const kept = summed.get(key);
    summed.set(key, kept ? { ...kept, sent: kept.sent + increment.sent } : { ...increment });
  }
  if (summed.size === 0) return null;
  const rows = [...summed.values()];
  return {
    statement: ADD_COUNTS,
    values: [
      rows.map((r) => r.addressId),
      rows.map((r) => r.provider),
      rows.map((r) => r.day),
      rows.map((r) => r.sent),
    ],
  };
}
