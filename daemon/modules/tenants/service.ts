// Tenants: create, list, read, update, delete, block, unblock, resume sending. These routes name
// the tenant in the path, so membership and role are checked here from that id (the auth plugin
// only knows the X-Tenant-Id header).
import { Op, type Sequelize, type Transaction } from 'sequelize';
import type { AppDeps } from '../../app-types.ts';
import type { Tenant } from './model.ts';
import { modelsOf } from '../models.ts';
import { recordAudit } from '../audit/service.ts';
import { roleAtLeast } from '../../context.ts';
import { ForbiddenError, NotFoundError } from '../../errors.ts';
import type { MemberRole } from '../../../shared/constants.ts';
import type { TenantBody, UpdateTenantBody } from '../../../shared/schemas/tenants.ts';
import { findPage } from '../../db/paging.ts';

/** The signed-in admin acting on a tenant named in the path. */
export interface Actor {
  adminId: string;
  isPlatformAdmin: boolean;
  ip?: string;
}

/** What the tenant, member, API-key, retention and audit services take. */
export type TenantDeps = Pick<AppDeps, 'db' | 'config' | 'secrets'>;

export const BLOCKED_MESSAGE =
  'This tenant has been blocked by the platform administrator; contact support to lift the block.';

export interface TenantAccess {
  tenant: Tenant;
  role: MemberRole | null;
}

/**
 * The tenant and the actor's role in it, when the actor holds at least `needed`. Non-members get
 * 403 (the same answer whether or not the tenant exists); platform admins may read any tenant
 * when `platformAdminMayRead` is set. A blocked tenant only answers reads.
 */
export async function requireTenantRole(
  sequelize: Sequelize,
  tenantId: string,
  actor: Actor,
  needed: MemberRole,
  options: { platformAdminMayRead?: boolean; transaction?: Transaction; allowBlocked?: boolean } = {},
): Promise<TenantAccess> {
  const { Membership, Tenant } = modelsOf(sequelize);
  const [tenant, membership] = await Promise.all([
    Tenant.findByPk(tenantId, { transaction: options.transaction }),
    Membership.findOne({ where: { tenantId, adminId: actor.adminId }, transaction: options.transaction }),
  ]);
  if (!tenant || !membership) {
    if (tenant && actor.isPlatformAdmin && options.platformAdminMayRead) return { tenant, role: null };
    if (!tenant && actor.isPlatformAdmin && options.platformAdminMayRead) throw new NotFoundError('Tenant');
    throw new ForbiddenError('You are not a member of this tenant.', 'NOT_A_MEMBER');
  }
  if (!roleAtLeast(membership.role, needed)) {
    throw new ForbiddenError(`This needs the ${needed} role or higher; you are ${membership.role}.`, 'ROLE_REQUIRED');
  }
  if (tenant.status === 'blocked' && !options.allowBlocked && !actor.isPlatformAdmin) {
    throw new ForbiddenError(BLOCKED_MESSAGE, 'TENANT_BLOCKED');
  }
  return { tenant, role: membership.role };
}

/** Early refusal for non-members, before the body is even validated (so they learn nothing from 400s). */
export async function assertMember(sequelize: Sequelize, tenantId: string, adminId: string): Promise<void> {
  const membership = await modelsOf(sequelize).Membership.findOne({
    where: { tenantId, adminId },
    attributes: ['role'],
  });
  if (!membership) throw new ForbiddenError('You are not a member of this tenant.', 'NOT_A_MEMBER');
}

export function tenantBody(tenant: Tenant, role: MemberRole | null): TenantBody {
  return {
    id: tenant.id,
    name: tenant.name,
    status: tenant.status,
    plan: tenant.plan,
    monthlyLimit: tenant.monthlyLimit,
    sendingPausedAt: tenant.sendingPausedAt ? tenant.sendingPausedAt.toISOString() : null,
    sendingPausedReason: tenant.sendingPausedReason,
    sendingAtRiskAt: tenant.sendingAtRiskAt ? tenant.sendingAtRiskAt.toISOString() : null,
    sendingAtRiskReason: tenant.sendingAtRiskReason,
    role,
    createdAt: tenant.createdAt.toISOString(),
  };
}

export async function createTenant(deps: TenantDeps, actor: Actor, input: { name: string }): Promise<TenantBody> {
  const { sequelize } = deps.db;
  return sequelize.transaction(async (transaction) => {
    const { Membership, Tenant } = modelsOf(sequelize);
    const tenant = await Tenant.create({ name: input.name.trim(), plan: 'free' }, { transaction });
    await Membership.create({ tenantId: tenant.id, adminId: actor.adminId, role: 'owner' }, { transaction });
    await recordAudit(
      sequelize,
      { action: 'tenant.created', tenantId: tenant.id, adminId: actor.adminId, ip: actor.ip, target: tenant.id },
      transaction,
    );
    return tenantBody(tenant, 'owner');
  });
}

/** Only the tenants the admin is a member of (platform admins included: they see others by id). */
export async function listTenants(deps: TenantDeps, actor: Actor, input: { page: number; limit: number }) {
  const { Membership, Tenant } = modelsOf(deps.db.sequelize);
  const { adminId } = actor;
  const { page, limit } = input;
  const memberships = await Membership.findAll({ where: { adminId }, attributes: ['tenantId', 'role'] });
  const roles = new Map(memberships.map((m) => [m.tenantId, m.role]));
  const where = { id: { [Op.in]: [...roles.keys()] } };
  return findPage(
    Tenant,
    {
      where,
      order: [
        ['createdAt', 'ASC'],
        ['id', 'ASC'],
      ],
    },
    { page, limit },
    (rows) => rows.map((tenant) => tenantBody(tenant, roles.get(tenant.id) ?? null)),
  );
}

export async function getTenant(deps: TenantDeps, actor: Actor, input: { tenantId: string }): Promise<TenantBody> {
  const { tenantId } = input;
  const { tenant, role } = await requireTenantRole(deps.db.sequelize, tenantId, actor, 'viewer', {
    platformAdminMayRead: true,
    allowBlocked: true,
  });
  return tenantBody(tenant, role);
}

/** `name` from owners and admins; `plan` and `monthlyLimit` from platform admins only. */
export async function updateTenant(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; body: UpdateTenantBody },
): Promise<TenantBody> {
  const { sequelize } = deps.db;
  const { tenantId, body: changes } = input;
  const billing = changes.plan !== undefined || changes.monthlyLimit !== undefined;
  if (billing && !actor.isPlatformAdmin) {
    throw new ForbiddenError(
      'Only platform administrators may change the plan or the monthly limit.',
      'PLATFORM_ADMIN_REQUIRED',
    );
  }
  return sequelize.transaction(async (transaction) => {
    const { tenant, role } = await requireTenantRole(
      sequelize,
      tenantId,
      actor,
      changes.name !== undefined ? 'admin' : 'viewer',
      {
        platformAdminMayRead: billing && changes.name === undefined,
        transaction,
      },
    );
    await tenant.update(
      {
        ...(changes.name !== undefined ? { name: changes.name.trim() } : {}),
        ...(changes.plan !== undefined ? { plan: changes.plan } : {}),
        ...(changes.monthlyLimit !== undefined ? { monthlyLimit: changes.monthlyLimit } : {}),
      },
      { transaction },
    );
    await recordAudit(
      sequelize,
      {
        action: 'tenant.updated',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: tenantId,
        metadata: { ...changes },
      },
      transaction,
    );
    return tenantBody(tenant, role);
  });
}

/** Deletes the tenant and, by cascade, everything it owns. Owners only. */
export async function deleteTenant(deps: TenantDeps, actor: Actor, input: { tenantId: string }): Promise<void> {
  const { sequelize } = deps.db;
  const { tenantId } = input;
  await sequelize.transaction(async (transaction) => {
    const { tenant } = await requireTenantRole(sequelize, tenantId, actor, 'owner', {
      transaction,
      allowBlocked: false,
    });
    await tenant.destroy({ transaction });
  });
}

async function setStatus(
  sequelize: Sequelize,
  tenantId: string,
  actor: Actor,
  status: 'active' | 'blocked',
): Promise<TenantBody> {
  const { Membership, Tenant } = modelsOf(sequelize);
  const body = await sequelize.transaction(async (transaction) => {
    const tenant = await Tenant.findByPk(tenantId, { transaction, lock: transaction.LOCK.UPDATE });
    if (!tenant) throw new NotFoundError('Tenant');
    await tenant.update({ status }, { transaction });
    await recordAudit(
      sequelize,
      {
        action: status === 'blocked' ? 'tenant.blocked' : 'tenant.unblocked',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: tenantId,
      },
      transaction,
    );
    const membership = await Membership.findOne({ where: { tenantId, adminId: actor.adminId }, transaction });
    return tenantBody(tenant, membership?.role ?? null);
  });
  // Cached keys carry the tenant's status: every API node drops them (tenants/state-cache.ts).
  return body;
}

/** Platform admins only (the route's access rule says so). */
export function blockTenant(deps: TenantDeps, actor: Actor, input: { tenantId: string }): Promise<TenantBody> {
  const { tenantId } = input;
  return setStatus(deps.db.sequelize, tenantId, actor, 'blocked');
}

export function unblockTenant(deps: TenantDeps, actor: Actor, input: { tenantId: string }): Promise<TenantBody> {
  const { tenantId } = input;
  return setStatus(deps.db.sequelize, tenantId, actor, 'active');
}

/** Lifts an automatic sending pause (bounce or complaint rate). Owners and admins. */
export async function resumeSending(deps: TenantDeps, actor: Actor, input: { tenantId: string }): Promise<TenantBody> {
  const { sequelize } = deps.db;
  const { tenantId } = input;
  return sequelize.transaction(async (transaction) => {
    const { tenant, role } = await requireTenantRole(sequelize, tenantId, actor, 'admin', { transaction });
    const wasPaused = tenant.sendingPausedAt !== null;
    await tenant.update({ sendingPausedAt: null, sendingPausedReason: null }, { transaction });
    await recordAudit(
      sequelize,
      {
        action: 'tenant.sending_resumed',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: tenantId,
        metadata: { wasPaused },
      },
      transaction,
    );
    return tenantBody(tenant, role);
  });
}
