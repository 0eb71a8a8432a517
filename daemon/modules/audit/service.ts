// Writes and reads the security audit log. Callers pass their transaction, so a change and its
// audit row are committed together or not at all.
import type { AppDeps } from '../../app-types.ts';
import { Op, type Sequelize, type Transaction } from 'sequelize';
import { modelsOf } from '../models.ts';
import type { AuditEventBody } from '../../../shared/schemas/tenants.ts';
import { findPage } from '../../db/paging.ts';

export type AuditAction =
  | 'auth.registered'
  | 'auth.login'
  | 'auth.login_failed'
  | 'auth.2fa_failed'
  | 'auth.refresh_reuse'
  | 'auth.logout_all'
  | 'auth.password_changed'
  | 'auth.password_reset'
  | 'auth.email_verified'
  | 'auth.2fa_enabled'
  | 'auth.2fa_disabled'
  | 'tenant.created'
  | 'tenant.updated'
  | 'tenant.retention_updated'
  | 'tenant.deleted'
  | 'tenant.blocked'
  | 'tenant.unblocked'
  | 'tenant.sending_resumed'
  | 'member.added'
  | 'member.role_changed'
  | 'member.removed'
  | 'member.invited'
  | 'api_key.created'
  | 'api_key.rotated'
  | 'api_key.revoked'
  | 'platform.settings_updated'
  | 'platform.queue_retried'
  | 'platform.queue_held'
  | 'platform.queue_released'
  | 'platform.provider_updated'
  | 'platform.reaction_rule_changed'
  | 'platform.reaction_lifted'
  | 'tenant.throttle_updated'
  | 'platform.ip_pools_changed'
  | 'platform.tls_report_sent';

export interface AuditEntry {
  action: AuditAction;
  tenantId?: string | null;
  adminId?: string | null;
  apiKeyId?: string | null;
  target?: string | null;
  ip?: string | null;
  metadata?: Record<string, unknown>;
}

export async function recordAudit(sequelize: Sequelize, entry: AuditEntry, transaction?: Transaction): Promise<void> {
  await modelsOf(sequelize).AuditEvent.create(
    {
      action: entry.action,
      tenantId: entry.tenantId ?? null,
      adminId: entry.adminId ?? null,
      apiKeyId: entry.apiKeyId ?? null,
      target: entry.target ?? null,
      ip: entry.ip ?? null,
      metadata: entry.metadata ?? {},
    },
    { transaction },
  );
}

/**
 * A tenant's audit log: its own events, plus the personal security events (sign-ins, 2FA,
 * password changes) of the people who are currently its members.
 */
export async function listTenantAuditEvents(
  deps: Pick<AppDeps, 'db'>,
  _actor: { adminId: string },
  input: { tenantId: string; page: number; limit: number },
) {
  const { tenantId, page, limit } = input;
  const { AuditEvent, Membership } = modelsOf(deps.db.sequelize);
  const members = await Membership.findAll({ where: { tenantId }, attributes: ['adminId'] });
  const memberIds = members.map((m) => m.adminId);
  const where = {
    [Op.or]: [{ tenantId }, ...(memberIds.length ? [{ tenantId: null, adminId: { [Op.in]: memberIds } }] : [])],
  };
  return findPage(
    AuditEvent,
    {
      where,
      order: [
        ['createdAt', 'DESC'],
        ['id', 'DESC'],
      ],
    },
    { page, limit },
    (rows) =>
      rows.map((row): AuditEventBody => ({
        id: row.id,
        action: row.action,
        adminId: row.adminId,
        apiKeyId: row.apiKeyId,
        target: row.target,
        ip: row.ip,
        metadata: row.metadata,
        createdAt: row.createdAt.toISOString(),
      })),
  );
}
