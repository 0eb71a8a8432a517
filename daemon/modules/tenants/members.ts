// Members of a tenant and their roles. Admins manage members; only owners grant, change or take
// away the owner role; the last owner can neither leave nor be demoted; anyone may leave.
import { Op, type Sequelize, type Transaction } from 'sequelize';
import type { Membership } from './model.ts';
import { modelsOf } from '../models.ts';
import { requireTenantRole, type TenantDeps, type Actor } from './service.ts';
import type { Admin } from '../auth/model.ts';
import { normaliseEmail } from '../auth/service.ts';
import { recordAudit } from '../audit/service.ts';
import { ConflictError, ForbiddenError, NotFoundError } from '../../errors.ts';
import type { MemberRole } from '../../../shared/constants.ts';
import type { InvitationBody, MemberBody } from '../../../shared/schemas/tenants.ts';
import { inviteByEmail } from './invitations.ts';
import { assertMayMailStrangers } from './invitation-limits.ts';
import { findPage } from '../../db/paging.ts';

function memberBody(membership: Membership, admin: Admin): MemberBody {
  return {
    adminId: admin.id,
    email: admin.email,
    name: admin.name,
    role: membership.role,
    createdAt: membership.createdAt.toISOString(),
  };
}

function onlyOwnersHandleOwners(actorRole: MemberRole | null): void {
  if (actorRole !== 'owner')
    throw new ForbiddenError('Only owners may grant, change or remove the owner role.', 'ROLE_REQUIRED');
}

async function lockedOwnerCount(sequelize: Sequelize, tenantId: string, transaction: Transaction): Promise<number> {
  const owners = await modelsOf(sequelize).Membership.findAll({
    where: { tenantId, role: 'owner' },
    transaction,
    lock: transaction.LOCK.UPDATE,
  });
  return owners.length;
}

export async function listMembers(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; page: number; limit: number },
) {
  const { Admin, Membership } = modelsOf(deps.db.sequelize);
  const { tenantId, page, limit } = input;
  await requireTenantRole(deps.db.sequelize, tenantId, actor, 'viewer', { allowBlocked: true });
  return findPage(
    Membership,
    {
      where: { tenantId },
      order: [
        ['createdAt', 'ASC'],
        ['adminId', 'ASC'],
      ],
    },
    { page, limit },
    async (rows) => {
      const admins = rows.length ? await Admin.findAll({ where: { id: { [Op.in]: rows.map((m) => m.adminId) } } }) : [];
      const byId = new Map(admins.map((a) => [a.id, a]));
      return rows.flatMap((m) => {
        const admin = byId.get(m.adminId);
        return admin ? [memberBody(m, admin)] : [];
      });
    },
  );
}

/**
 * Adds an existing admin to the tenant; an address with no account gets an invitation instead
 * (a mail with a sign-up link; registering with it joins the tenant with this role), which only an
 * inviter with a verified address may send, within the daily caps (invitation-limits.ts).
 */
export async function addMember(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; body: { email: string; role: MemberRole } },
): Promise<{ member: MemberBody } | { invitation: InvitationBody }> {
  const { tenantId, body } = input;
  const { sequelize } = deps.db;
  const { Admin, Membership, Tenant } = modelsOf(sequelize);
  return sequelize.transaction(async (transaction) => {
    const { role: actorRole } = await requireTenantRole(deps.db.sequelize, tenantId, actor, 'admin', { transaction });
    if (body.role === 'owner') onlyOwnersHandleOwners(actorRole);
    const email = normaliseEmail(body.email);
    const admin = await Admin.findOne({ where: { email }, transaction });
    if (!admin) {
      const [tenant, inviter] = await Promise.all([
        Tenant.findByPk(tenantId, { transaction }),
        Admin.findByPk(actor.adminId, { transaction }),
      ]);
      if (!tenant) throw new NotFoundError('Tenant');
      assertMayMailStrangers(inviter);
      const invitation = await inviteByEmail({ sequelize, config: deps.config, secrets: deps.secrets }, transaction, {
        tenantId,
        tenantName: tenant.name,
        email,
        role: body.role,
        invitedBy: actor.adminId,
        inviterEmail: inviter.email,
        ip: actor.ip,
      });
      return { invitation };
    }
    const existing = await Membership.findOne({ where: { tenantId, adminId: admin.id }, transaction });
    if (existing)
      throw new ConflictError(
        `${admin.email} is already a member of this tenant (as ${existing.role}).`,
        'ALREADY_MEMBER',
      );
    const membership = await Membership.create({ tenantId, adminId: admin.id, role: body.role }, { transaction });
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'member.added',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: admin.id,
        metadata: { role: body.role },
      },
      transaction,
    );
    return { member: memberBody(membership, admin) };
  });
}

export async function changeMemberRole(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; targetAdminId: string; role: MemberRole },
): Promise<MemberBody> {
  const { sequelize } = deps.db;
  const { Admin, Membership } = modelsOf(sequelize);
  const { tenantId, targetAdminId, role } = input;
  return sequelize.transaction(async (transaction) => {
    const { role: actorRole } = await requireTenantRole(deps.db.sequelize, tenantId, actor, 'admin', { transaction });
    const membership = await Membership.findOne({
      where: { tenantId, adminId: targetAdminId },
      transaction,
      lock: transaction.LOCK.UPDATE,
    });
    const admin = membership ? await Admin.findByPk(targetAdminId, { transaction }) : null;
    if (!membership || !admin) throw new NotFoundError('Member');
    if (membership.role === 'owner' || role === 'owner') onlyOwnersHandleOwners(actorRole);
    if (
      membership.role === 'owner' &&
      role !== 'owner' &&
      (await lockedOwnerCount(deps.db.sequelize, tenantId, transaction)) <= 1
    ) {
      throw new ConflictError('This is the last owner: make another member owner first.', 'LAST_OWNER');
    }
    const previous = membership.role;
    await membership.update({ role }, { transaction });
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'member.role_changed',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: targetAdminId,
        metadata: { from: previous, to: role },
      },
      transaction,
    );
    return memberBody(membership, admin);
  });
}

/** Admins remove others; any member may remove themselves (leave). */
export async function removeMember(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; targetAdminId: string },
): Promise<void> {
  const { sequelize } = deps.db;
  const { Membership } = modelsOf(sequelize);
  const { tenantId, targetAdminId } = input;
  await sequelize.transaction(async (transaction) => {
    const leaving = targetAdminId === actor.adminId;
    const { role: actorRole } = await requireTenantRole(
      deps.db.sequelize,
      tenantId,
      actor,
      leaving ? 'viewer' : 'admin',
      {
        transaction,
        allowBlocked: leaving,
      },
    );
    const membership = await Membership.findOne({
      where: { tenantId, adminId: targetAdminId },
      transaction,
      lock: transaction.LOCK.UPDATE,
    });
    if (!membership) throw new NotFoundError('Member');
    if (membership.role === 'owner') {
      if (!leaving) onlyOwnersHandleOwners(actorRole);
      if ((await lockedOwnerCount(deps.db.sequelize, tenantId, transaction)) <= 1) {
        throw new ConflictError(
          'This is the last owner: make another member owner first, or delete the tenant.',
          'LAST_OWNER',
        );
      }
    }
    await membership.destroy({ transaction });
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'member.removed',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: targetAdminId,
        metadata: { role: membership.role, left: leaving },
      },
      transaction,
    );
  });
}
