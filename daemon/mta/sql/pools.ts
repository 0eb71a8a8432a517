// The MTA loop's statements on IP pools (migrations 0370–0375, docs/mta.md "IP pools and warm-up"):
// which pool a row leaves from, a pool's addresses and schedule with today's counts, and the batched
// count upsert that goes into the loop's commit transaction.
import { declare, type BoundStatement, type Sql } from '../../db/sql.ts';
import { WARMUP_HOLD, type WarmupStanding } from '../warmup.ts';
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

/**
 * $1 address ids, $2 today (UTC), $3 and $4 WARMUP_HOLD's minimum and rate: per address and provider,
 * today's recipients and refusals and the days of the current warm-up before today that held the ramp.
 * Read by the MTA loop's chooser and by the pools API alike (readWarmupStandings, selectWarmupStandings).
 * `held_days` applies warmup.ts `holdsRamp` to past days in SQL; today's counts go to holdsRamp itself.
 */
const WARMUP_STANDINGS = declare(
  'ip_warmup_standings',
  `SELECT c.address_id::text AS address_id, c.provider,
          COALESCE(sum(c.sent) FILTER (WHERE c.day = $2::date), 0)::int AS sent,
          COALESCE(sum(c.refused) FILTER (WHERE c.day = $2::date), 0)::int AS refused,
          count(*) FILTER (WHERE c.day < $2::date AND c.sent >= $3::int AND c.refused >= c.sent * $4::float8)::int AS held_days
     FROM ip_warmup_counts c JOIN ip_pool_addresses a ON a.id = c.address_id
    WHERE c.address_id = ANY($1::uuid[]) AND c.day <= $2::date
      AND c.day >= LEAST(COALESCE((a.warmup_started_at AT TIME ZONE 'UTC')::date, $2::date), $2::date)
    GROUP BY c.address_id, c.provider`,
);

const ADD_COUNTS = declare(
  'ip_warmup_counts_add',
  `INSERT INTO ip_warmup_counts (address_id, provider, day, sent, refused)
   SELECT * FROM unnest($1::uuid[], $2::text[], $3::date[], $4::int[], $5::int[])
   ON CONFLICT (address_id, day, provider)
   DO UPDATE SET sent = ip_warmup_counts.sent + EXCLUDED.sent, refused = ip_warmup_counts.refused + EXCLUDED.refused`,
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

/** WARMUP_STANDINGS's rows by `${addressId}|${provider}`, whichever way they were read. */
export function standingsByKey(
  rows: Array<{ address_id: string; provider: string; sent: number; refused: number; held_days: number }>,
): Map<string, WarmupStanding> {
  return new Map(
    rows.map((row) => [
      `${row.address_id}|${row.provider}`,
      { sent: row.sent, refused: row.refused, heldDays: row.held_days },
    ]),
  );
}

/** The statement and values of the warm-up standings of `addressIds` on `day` (for a caller's own runner). */
export function warmupStandingsStatement(addressIds: string[], day: string): BoundStatement {
  return { statement: WARMUP_STANDINGS, values: [addressIds, day, WARMUP_HOLD.minimum, WARMUP_HOLD.rate] };
}

/** Warm-up standings of `day` by `${addressId}|${provider}`. */
export async function readWarmupStandings(
  sql: Sql,
  addressIds: string[],
  day: string,
): Promise<Map<string, WarmupStanding>> {
  const { statement, values } = warmupStandingsStatement(addressIds, day);
  return standingsByKey(await sql.rows(statement, values));
}

export interface CountIncrement {
  addressId: string;
  provider: string;
  day: string;
  /** Recipients that reached the provider's MX hosts. */
  sent: number;
  /** Of them, deferred or bounced. */
  refused: number;
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
    summed.set(
      key,
      kept
        ? { ...kept, sent: kept.sent + increment.sent, refused: kept.refused + increment.refused }
        : { ...increment },
    );
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
      rows.map((r) => r.refused),
    ],
  };
}
