// The SQL of /platform/ip-pools (tables of migrations 0370–0373). Plain statements through Sequelize's
// query with replacements: a handful of rows per admin action.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { standingsByKey, warmupStandingsStatement } from '../../mta/sql/pools.ts';
import type { WarmupStanding } from '../../mta/warmup.ts';
import { wakePoolWaitsStatement } from '../../mta/sql/spool-waits.ts';
import type { MailStream, WarmupSchedule } from '../../../shared/schemas/ip-pools.ts';

export interface PoolRow {
  id: string;
  name: string;
  description: string | null;
  warmup_schedule: WarmupSchedule | null;
  created_at: Date;
  updated_at: Date;
}

export interface AddressRow {
  id: string;
  pool_id: string;
  ip: string;
  ehlo_name: string;
  weight: number;
  warmup_started_at: Date | null;
  created_at: Date;
}

export interface AssignmentRow {
  id: string;
  pool_id: string;
  tenant_id: string;
  tenant_name: string;
  project_id: string | null;
  stream: MailStream | null;
  created_at: Date;
}

type Options = { transaction?: Transaction };

const select = <T extends object>(
  sequelize: Sequelize,
  sql: string,
  replacements: Record<string, unknown>,
  options: Options = {},
) => sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT, transaction: options.transaction });

export function selectPools(sequelize: Sequelize, poolId: string | null): Promise<PoolRow[]> {
  return select<PoolRow>(
    sequelize,
    `SELECT id::text, name, description, warmup_schedule, created_at, updated_at FROM ip_pools
      WHERE (CAST(:poolId AS uuid) IS NULL OR id = CAST(:poolId AS uuid)) ORDER BY name`,
    { poolId },
  );
}

export function selectAddresses(sequelize: Sequelize, poolIds: string[]): Promise<AddressRow[]> {
  if (poolIds.length === 0) return Promise.resolve([]);
  return select<AddressRow>(
    sequelize,
    `SELECT id::text, pool_id::text, ip, ehlo_name, weight, warmup_started_at, created_at FROM ip_pool_addresses
      WHERE pool_id IN (:poolIds) ORDER BY created_at, ip`,
    { poolIds },
  );
}

/** Every address of every pool (the addresses direct delivery may leave from), in order. */
export async function selectPoolIps(sequelize: Sequelize): Promise<string[]> {
  const rows = await sequelize.query<{ ip: string }>('SELECT DISTINCT ip FROM ip_pool_addresses ORDER BY ip', {
    type: QueryTypes.SELECT,
  });
  return rows.map((row) => row.ip);
}

export function selectAssignments(sequelize: Sequelize, poolIds: string[]): Promise<AssignmentRow[]> {
  if (poolIds.length === 0) return Promise.resolve([]);
  return select<AssignmentRow>(
    sequelize,
    `SELECT a.id::text, a.pool_id::text, a.tenant_id::text, t.name AS tenant_name, a.project_id::text, a.stream, a.created_at
       FROM ip_pool_assignments a JOIN tenants t ON t.id = a.tenant_id
      WHERE a.pool_id IN (:poolIds) ORDER BY t.name, a.project_id NULLS FIRST, a.stream NULLS FIRST`,
    { poolIds },
  );
}

/** The warm-up standings the MTA loop reads (mta/sql/pools.ts), by `${addressId}|${provider}`. */
export async function selectWarmupStandings(
  sequelize: Sequelize,
  addressIds: string[],
  day: string,
): Promise<Map<string, WarmupStanding>> {
  if (addressIds.length === 0) return new Map();
  const { statement, values } = warmupStandingsStatement(addressIds, day);
  return standingsByKey(await sequelize.query(statement.text, { bind: values, type: QueryTypes.SELECT }));
}

export async function insertPool(
  sequelize: Sequelize,
  pool: { name: string; description: string | null; schedule: WarmupSchedule | null },
  options: Options,
): Promise<string> {
  const [row] = await select<{ id: string }>(
    sequelize,
    `INSERT INTO ip_pools (name, description, warmup_schedule) VALUES (:name, :description, CAST(:schedule AS jsonb))
     ON CONFLICT (name) DO NOTHING RETURNING id::text`,
    { name: pool.name, description: pool.description, schedule: pool.schedule ? JSON.stringify(pool.schedule) : null },
    options,
  );
  return row?.id ?? '';
}

export async function updatePoolRow(
  sequelize: Sequelize,
  poolId: string,
  changes: { name?: string; description?: string | null; schedule?: WarmupSchedule | null },
  options: Options,
): Promise<'updated' | 'missing' | 'name-taken'> {
  const [taken] = changes.name
    ? await select<{ id: string }>(
        sequelize,
        `SELECT id::text FROM ip_pools WHERE name = :name AND id <> :poolId`,
        { name: changes.name, poolId },
        options,
      )
    : [];
  if (taken) return 'name-taken';
  const rows = await select<{ id: string }>(
    sequelize,
    `UPDATE ip_pools SET
        name = COALESCE(:name, name),
        description = CASE WHEN :setDescription THEN :description ELSE description END,
        warmup_schedule = CASE WHEN :setSchedule THEN CAST(:schedule AS jsonb) ELSE warmup_schedule END,
        updated_at = now()
      WHERE id = :poolId RETURNING id::text`,
    {
      poolId,
      name: changes.name ?? null,
      setDescription: changes.description !== undefined,
      description: changes.description ?? null,
      setSchedule: changes.schedule !== undefined,
      schedule: changes.schedule ? JSON.stringify(changes.schedule) : null,
    },
    options,
  );
  return rows.length > 0 ? 'updated' : 'missing';
}

export async function deletePoolRow(sequelize: Sequelize, poolId: string, options: Options): Promise<boolean> {
  const rows = await select<{ id: string }>(
    sequelize,
    `DELETE FROM ip_pools WHERE id = :poolId RETURNING id::text`,
    { poolId },
    options,
  );
  return rows.length > 0;
}

/** Inserts an address; answers its id, or null when the IP already belongs to a pool. */
export async function insertAddress(
  sequelize: Sequelize,
  address: { poolId: string; ip: string; ehloName: string; weight: number; warmupStartedAt: Date | null },
  options: Options,
): Promise<string | null> {
  const [row] = await select<{ id: string }>(
    sequelize,
    `INSERT INTO ip_pool_addresses (pool_id, ip, ehlo_name, weight, warmup_started_at)
     VALUES (:poolId, :ip, :ehloName, :weight, :warmupStartedAt)
     ON CONFLICT (ip) DO NOTHING RETURNING id::text`,
    { ...address },
    options,
  );
  return row?.id ?? null;
}

export async function updateAddressRow(
  sequelize: Sequelize,
  poolId: string,
  addressId: string,
  changes: { ehloName?: string; weight?: number; warmupStartedAt?: Date | null },
  options: Options,
): Promise<boolean> {
  const rows = await select<{ id: string }>(
    sequelize,
    `UPDATE ip_pool_addresses SET
        ehlo_name = COALESCE(:ehloName, ehlo_name),
        weight = COALESCE(:weight, weight),
        warmup_started_at = CASE WHEN :setStart THEN CAST(:warmupStartedAt AS timestamptz) ELSE warmup_started_at END
      WHERE id = :addressId AND pool_id = :poolId RETURNING id::text`,
    {
      poolId,
      addressId,
      ehloName: changes.ehloName ?? null,
      weight: changes.weight ?? null,
      setStart: changes.warmupStartedAt !== undefined,
      warmupStartedAt: changes.warmupStartedAt ?? null,
    },
    options,
  );
  return rows.length > 0;
}

export async function deleteAddressRow(
  sequelize: Sequelize,
  poolId: string,
  addressId: string,
  options: Options,
): Promise<boolean> {
  return deletePoolChild(sequelize, 'ip_pool_addresses', poolId, addressId, options);
}

// Spelled out per table rather than templated: sql-homes reads table names from the statement text.
const DELETE_POOL_CHILD = {
  ip_pool_addresses: 'DELETE FROM ip_pool_addresses WHERE id = :id AND pool_id = :poolId RETURNING id::text',
  ip_pool_assignments: 'DELETE FROM ip_pool_assignments WHERE id = :id AND pool_id = :poolId RETURNING id::text',
} as const;

/** Deletes one row of a pool's child table, only when it belongs to that pool; answers whether it existed. */
async function deletePoolChild(
  sequelize: Sequelize,
  table: keyof typeof DELETE_POOL_CHILD,
  poolId: string,
  id: string,
  options: Options,
): Promise<boolean> {
  const rows = await select<{ id: string }>(sequelize, DELETE_POOL_CHILD[table], { poolId, id }, options);
  return rows.length > 0;
}

/** Assigns the scope to the pool, replacing the scope's earlier assignment; answers the assignment id. */
export async function upsertAssignment(
  sequelize: Sequelize,
  assignment: { poolId: string; tenantId: string; projectId: string | null; stream: MailStream | null },
  options: Options,
): Promise<string> {
  await select(
    sequelize,
    `DELETE FROM ip_pool_assignments WHERE tenant_id = :tenantId
        AND project_id IS NOT DISTINCT FROM CAST(:projectId AS uuid) AND stream IS NOT DISTINCT FROM CAST(:stream AS text)`,
    assignment,
    options,
  );
  const [row] = await select<{ id: string }>(
    sequelize,
    `INSERT INTO ip_pool_assignments (pool_id, tenant_id, project_id, stream)
     VALUES (:poolId, :tenantId, :projectId, :stream) RETURNING id::text`,
    assignment,
    options,
  );
  return row.id;
}

export async function deleteAssignmentRow(
  sequelize: Sequelize,
  poolId: string,
  assignmentId: string,
  options: Options,
): Promise<boolean> {
  return deletePoolChild(sequelize, 'ip_pool_assignments', poolId, assignmentId, options);
}

export async function countAssignments(sequelize: Sequelize, poolId: string, options: Options): Promise<number> {
  const [row] = await select<{ n: number }>(
    sequelize,
    `SELECT count(*)::int AS n FROM ip_pool_assignments WHERE pool_id = :poolId`,
    { poolId },
    options,
  );
  return row.n;
}

export async function tenantExists(sequelize: Sequelize, tenantId: string): Promise<boolean> {
  const rows = await select(sequelize, `SELECT 1 FROM tenants WHERE id = :tenantId`, { tenantId });
  return rows.length > 0;
}

export async function projectOfTenant(sequelize: Sequelize, tenantId: string, projectId: string): Promise<boolean> {
  const rows = await select(sequelize, `SELECT 1 FROM projects WHERE id = :projectId AND tenant_id = :tenantId`, {
    tenantId,
    projectId,
  });
  return rows.length > 0;
}

/**
 * After any change to a pool: the MTA loops of every node drop what they cached of pools, and rows
 * waiting for warm-up room in this pool become due now, the loop woken (the spool's statement is its
 * home's, mta/sql/spool-waits.ts).
 */
export async function announcePoolChange(sequelize: Sequelize, poolId: string, options: Options): Promise<void> {
  const { statement, values } = wakePoolWaitsStatement(poolId);
  await sequelize.query(statement.text, { bind: values, type: QueryTypes.SELECT, transaction: options.transaction });
}
