// IP pools as platform admins manage them (issue 29, docs/mta.md "IP pools and warm-up"): pools, their
// source addresses, which tenants (projects, streams) send from them, and the warm-up schedule, with
// each address's progress today. The mechanism (choosing an address per message, counting) is the
// MTA's: daemon/mta/source-address.ts. Every read takes `now`, so a test clock shows day 1, 10, 30.
import type { Sequelize } from 'sequelize';
import type { AppDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../../errors.ts';
import { bindProblem, sourceAddressProblem } from '../../mta/bindable-address.ts';
import { recordAudit } from '../audit/service.ts';
import { DEFAULT_PROVIDERS } from '../../mta/providers.ts';
import { IP_POOLS_CHANNEL } from '../../mta/sql/pools.ts';
import {
  ceilingFor,
  defaultWarmupSchedule,
  isWarming,
  NO_STANDING,
  scheduleProblem,
  utcDay,
  warmupDay,
  warmupStep,
  type WarmupStanding,
} from '../../mta/warmup.ts';
import {
  countAssignments,
  deleteAddressRow,
  deleteAssignmentRow,
  deletePoolRow,
  insertAddress,
  insertPool,
  projectOfTenant,
  selectAddresses,
  selectAssignments,
  selectWarmupStandings,
  selectPools,
  tenantExists,
  updateAddressRow,
  updatePoolRow,
  upsertAssignment,
  announcePoolChange,
  type AddressRow,
} from './sql.ts';
import type {
  AssignIpPoolBody,
  CreateIpPoolAddressBody,
  CreateIpPoolBody,
  IpPool,
  IpPoolAddress,
  IpPoolAssignment,
  UpdateIpPoolAddressBody,
  UpdateIpPoolBody,
  WarmupSchedule,
} from '../../../shared/schemas/ip-pools.ts';

export type IpPoolDeps = Pick<AppDeps, 'db'>;

/**
 * Tells this process's MTA loop (another thread) that pools changed, once the change is committed;
 * other nodes hear the NOTIFY of announcePoolChange.
 */
function broadcastPoolChange(): void {
  const channel = new BroadcastChannel(IP_POOLS_CHANNEL);
  channel.postMessage('changed');
  channel.close();
}
export type IpPoolActor = AdminContext & { ip?: string };

/** The provider keys shown for every address: the shipped providers' (shaping's own list). */
const PROVIDER_KEYS = DEFAULT_PROVIDERS.map((provider) => provider.key);

function checkSchedule(schedule: WarmupSchedule, field = 'schedule'): void {
  const problem = scheduleProblem(schedule);
  if (problem)
    throw new ValidationError(`The warm-up schedule is not valid: ${problem.field} ${problem.message}.`, [
      { field: `${field}.${problem.field}`, message: problem.message },
    ]);
}

/**
 * A 400 for an address no host sends from (unspecified, broadcast, multicast, reserved, documentation),
 * a 422 for one this node cannot bind: the node that adds an address is expected to send from it (the
 * other nodes are checked by `svc doctor` on each).
 */
async function checkSourceAddress(ip: string, field: string): Promise<void> {
  const problem = sourceAddressProblem(ip);
  if (problem) throw new ValidationError(`${problem}.`, [{ field, message: problem }]);
  const unbound = await bindProblem(ip);
  if (unbound)
    throw new UnprocessableError(
      `${unbound}. Add the address to a network interface of this host first (e.g. ip address add ${ip} dev eth0), ` +
        'and on every node that delivers directly (svc doctor checks each); then add it to the pool.',
      'ADDRESS_NOT_BINDABLE',
    );
}

const normalizeName = (name: string) => name.toLowerCase().replace(/\.$/, '');

function addressOf(
  row: AddressRow,
  schedule: WarmupSchedule,
  standings: Map<string, WarmupStanding>,
  now: Date,
): IpPoolAddress {
  const started = row.warmup_started_at;
  const standingOf = (provider: string) => standings.get(`${row.id}|${provider}`) ?? NO_STANDING;
  const warming = isWarming(schedule, started, now, PROVIDER_KEYS.map(standingOf));
  return {
    id: row.id,
    ip: row.ip,
    ehloName: row.ehlo_name,
    weight: row.weight,
    warmupStartedAt: started ? started.toISOString() : null,
    warmup: {
      state: warming ? 'warming' : 'warm',
      day: warming ? warmupDay(started, now) : null,
      days: schedule.days,
      providers: PROVIDER_KEYS.map((provider) => {
        const standing = standingOf(provider);
        return {
          provider,
          sent: standing.sent,
          refused: standing.refused,
          heldDays: standing.heldDays,
          step: warmupStep(schedule, started, now, standing),
          ceiling: ceilingFor(schedule, provider, started, now, standing),
        };
      }),
    },
    createdAt: row.created_at.toISOString(),
  };
}

async function readPools(sequelize: Sequelize, poolId: string | null, now: Date): Promise<IpPool[]> {
  const pools = await selectPools(sequelize, poolId);
  const ids = pools.map((pool) => pool.id);
  const [addresses, assignments] = await Promise.all([
    selectAddresses(sequelize, ids),
    selectAssignments(sequelize, ids),
  ]);
  const today = utcDay(now);
  const standings = await selectWarmupStandings(
    sequelize,
    addresses.map((address) => address.id),
    today,
  );
  return pools.map((pool) => {
    const schedule = pool.warmup_schedule ?? defaultWarmupSchedule();
    return {
      id: pool.id,
      name: pool.name,
      description: pool.description,
      schedule,
      defaultSchedule: pool.warmup_schedule === null,
      addresses: addresses
        .filter((address) => address.pool_id === pool.id)
        .map((address) => addressOf(address, schedule, standings, now)),
      assignments: assignments
        .filter((assignment) => assignment.pool_id === pool.id)
        .map((assignment): IpPoolAssignment => ({
          id: assignment.id,
          poolId: assignment.pool_id,
          tenantId: assignment.tenant_id,
          tenantName: assignment.tenant_name,
          projectId: assignment.project_id,
          stream: assignment.stream,
          createdAt: assignment.created_at.toISOString(),
        })),
      today,
      createdAt: pool.created_at.toISOString(),
      updatedAt: pool.updated_at.toISOString(),
    };
  });
}

export async function listIpPools(deps: IpPoolDeps, now = new Date()): Promise<{ data: IpPool[] }> {
  return { data: await readPools(deps.db.sequelize, null, now) };
}

export async function getIpPool(deps: IpPoolDeps, poolId: string, now = new Date()): Promise<IpPool> {
  const [pool] = await readPools(deps.db.sequelize, poolId, now);
  if (!pool) throw new NotFoundError('The IP pool');
  return pool;
}

function audit(actor: IpPoolActor, change: string, metadata: Record<string, unknown>) {
  return {
    action: 'platform.ip_pools_changed' as const,
    adminId: actor.adminId,
    ip: actor.ip,
    metadata: { change, ...metadata },
  };
}

function addressValues(poolId: string, body: CreateIpPoolAddressBody, now: Date) {
  return {
    poolId,
    ip: body.ip,
    ehloName: normalizeName(body.ehloName),
    weight: body.weight ?? 1,
    warmupStartedAt: body.warmup === false ? null : body.warmupStartedAt ? new Date(body.warmupStartedAt) : now,
  };
}

export async function createIpPool(
  deps: IpPoolDeps,
  actor: IpPoolActor,
  body: CreateIpPoolBody,
  now = new Date(),
): Promise<IpPool> {
  const { sequelize } = deps.db;
  if (body.schedule) checkSchedule(body.schedule);
  for (const [index, address] of (body.addresses ?? []).entries())
    await checkSourceAddress(address.ip, `addresses.${index}.ip`);
  const id = await sequelize.transaction(async (transaction) => {
    const poolId = await insertPool(
      sequelize,
      { name: body.name, description: body.description ?? null, schedule: body.schedule ?? null },
      { transaction },
    );
    if (!poolId) throw new ConflictError(`An IP pool named ${body.name} already exists.`);
    for (const address of body.addresses ?? []) {
      const values = addressValues(poolId, address, now);
      if (!(await insertAddress(sequelize, values, { transaction })))
        throw new ConflictError(`${values.ip} already belongs to an IP pool.`);
    }
    await recordAudit(deps.db.sequelize, audit(actor, 'pool_created', { poolId, name: body.name }), transaction);
    return poolId;
  });
  return getIpPool(deps, id, now);
}

export async function updateIpPool(
  deps: IpPoolDeps,
  actor: IpPoolActor,
  poolId: string,
  body: UpdateIpPoolBody,
): Promise<IpPool> {
  const { sequelize } = deps.db;
  await sequelize.transaction(async (transaction) => {
    const result = await updatePoolRow(sequelize, poolId, body, { transaction });
    if (result === 'missing') throw new NotFoundError('The IP pool');
    if (result === 'name-taken') throw new ConflictError(`An IP pool named ${body.name} already exists.`);
    await announcePoolChange(sequelize, poolId, { transaction });
    await recordAudit(
      deps.db.sequelize,
      audit(actor, 'pool_updated', { poolId, fields: Object.keys(body) }),
      transaction,
    );
  });
  broadcastPoolChange();
  return getIpPool(deps, poolId);
}

/** A pool still assigned is not deleted (its tenants would silently fall back to the node's address). */
export async function deleteIpPool(deps: IpPoolDeps, actor: IpPoolActor, poolId: string): Promise<void> {
  const { sequelize } = deps.db;
  await sequelize.transaction(async (transaction) => {
    const assigned = await countAssignments(sequelize, poolId, { transaction });
    if (assigned > 0)
      throw new ConflictError(`The IP pool is assigned ${assigned} time(s): remove its assignments first.`);
    if (!(await deletePoolRow(sequelize, poolId, { transaction }))) throw new NotFoundError('The IP pool');
    await announcePoolChange(sequelize, poolId, { transaction });
    await recordAudit(deps.db.sequelize, audit(actor, 'pool_deleted', { poolId }), transaction);
  });
  broadcastPoolChange();
}

export async function addIpPoolAddress(
  deps: IpPoolDeps,
  actor: IpPoolActor,
  poolId: string,
  body: CreateIpPoolAddressBody,
  now = new Date(),
): Promise<IpPool> {
  const { sequelize } = deps.db;
  await getIpPool(deps, poolId, now);
  await checkSourceAddress(body.ip, 'ip');
  await sequelize.transaction(async (transaction) => {
    const values = addressValues(poolId, body, now);
    const id = await insertAddress(sequelize, values, { transaction });
    if (!id) throw new ConflictError(`${values.ip} already belongs to an IP pool.`);
    await announcePoolChange(sequelize, poolId, { transaction });
    await recordAudit(
      deps.db.sequelize,
      audit(actor, 'address_added', { poolId, addressId: id, ip: values.ip }),
      transaction,
    );
  });
  broadcastPoolChange();
  return getIpPool(deps, poolId, now);
}

export async function updateIpPoolAddress(
  deps: IpPoolDeps,
  actor: IpPoolActor,
  poolId: string,
  addressId: string,
  body: UpdateIpPoolAddressBody,
  now = new Date(),
): Promise<IpPool> {
  const { sequelize } = deps.db;
  await sequelize.transaction(async (transaction) => {
    const changes = {
      ehloName: body.ehloName === undefined ? undefined : normalizeName(body.ehloName),
      weight: body.weight,
      warmupStartedAt:
        body.warmupStartedAt === undefined
          ? undefined
          : body.warmupStartedAt === null
            ? null
            : new Date(body.warmupStartedAt),
    };
    if (!(await updateAddressRow(sequelize, poolId, addressId, changes, { transaction })))
      throw new NotFoundError('The address');
    await announcePoolChange(sequelize, poolId, { transaction });
    await recordAudit(
      deps.db.sequelize,
      audit(actor, 'address_updated', { poolId, addressId, fields: Object.keys(body) }),
      transaction,
    );
  });
  broadcastPoolChange();
  return getIpPool(deps, poolId, now);
}

export async function removeIpPoolAddress(
  deps: IpPoolDeps,
  actor: IpPoolActor,
  poolId: string,
  addressId: string,
): Promise<void> {
  const { sequelize } = deps.db;
  await sequelize.transaction(async (transaction) => {
    if (!(await deleteAddressRow(sequelize, poolId, addressId, { transaction })))
      throw new NotFoundError('The address');
    await recordAudit(deps.db.sequelize, audit(actor, 'address_removed', { poolId, addressId }), transaction);
  });
  broadcastPoolChange();
}

export async function assignIpPool(
  deps: IpPoolDeps,
  actor: IpPoolActor,
  poolId: string,
  body: AssignIpPoolBody,
): Promise<IpPool> {
  const { sequelize } = deps.db;
  await getIpPool(deps, poolId);
  if (!(await tenantExists(sequelize, body.tenantId))) throw new NotFoundError('The tenant');
  if (body.projectId && !(await projectOfTenant(sequelize, body.tenantId, body.projectId)))
    throw new NotFoundError('The project');
  await sequelize.transaction(async (transaction) => {
    const id = await upsertAssignment(
      sequelize,
      { poolId, tenantId: body.tenantId, projectId: body.projectId ?? null, stream: body.stream ?? null },
      { transaction },
    );
    await announcePoolChange(sequelize, poolId, { transaction });
    await recordAudit(
      deps.db.sequelize,
      { ...audit(actor, 'assigned', { poolId, assignmentId: id, ...body }), tenantId: body.tenantId },
      transaction,
    );
  });
  broadcastPoolChange();
  return getIpPool(deps, poolId);
}

export async function unassignIpPool(
  deps: IpPoolDeps,
  actor: IpPoolActor,
  poolId: string,
  assignmentId: string,
): Promise<void> {
  const { sequelize } = deps.db;
  await sequelize.transaction(async (transaction) => {
    if (!(await deleteAssignmentRow(sequelize, poolId, assignmentId, { transaction })))
      throw new NotFoundError('The assignment');
    await announcePoolChange(sequelize, poolId, { transaction });
    await recordAudit(deps.db.sequelize, audit(actor, 'unassigned', { poolId, assignmentId }), transaction);
  });
  broadcastPoolChange();
}

/** Sets the pool's own schedule; null goes back to the shipped default. */
export async function setIpPoolSchedule(
  deps: IpPoolDeps,
  actor: IpPoolActor,
  poolId: string,
  schedule: WarmupSchedule | null,
): Promise<IpPool> {
  const { sequelize } = deps.db;
  if (schedule) checkSchedule(schedule, 'body');
  await sequelize.transaction(async (transaction) => {
    if ((await updatePoolRow(sequelize, poolId, { schedule }, { transaction })) === 'missing')
      throw new NotFoundError('The IP pool');
    await announcePoolChange(sequelize, poolId, { transaction });
    await recordAudit(
      deps.db.sequelize,
      audit(actor, schedule ? 'schedule_set' : 'schedule_reset', { poolId }),
      transaction,
    );
  });
  broadcastPoolChange();
  return getIpPool(deps, poolId);
}
