// Retention horizons: the platform default (platform settings) and a tenant's shorter overrides
// (tenant_retention), read and changed for GET/PATCH /tenants/{tenantId}/retention.
import { QueryTypes, type Sequelize } from 'sequelize';
import { ValidationError } from '../../errors.ts';
import { recordAudit } from '../audit/service.ts';
import { getPlatformSettings } from '../../db/platform-settings.ts';
import { requireTenantRole, type Actor, type TenantDeps } from '../tenants/service.ts';
import type { PlatformSettings } from '../../../shared/schemas/platform.ts';
import {
  RETENTION_KINDS,
  type RetentionKind,
  type RetentionPolicy,
  type TenantRetentionBody,
  type UpdateTenantRetentionBody,
} from '../../../shared/schemas/retention.ts';

/** tenant_retention's column of each horizon. */
export const RETENTION_COLUMNS: Record<RetentionKind, string> = {
  logsDays: 'logs_days',
  bodiesDays: 'bodies_days',
  rawMessagesDays: 'raw_days',
  eventsDays: 'events_days',
  webhookDeliveriesDays: 'webhook_deliveries_days',
};

export function platformPolicy(settings: PlatformSettings): RetentionPolicy {
  return {
    logsDays: settings.logRetentionDays,
    bodiesDays: settings.bodyRetentionDays,
    rawMessagesDays: settings.rawMessageRetentionDays,
    eventsDays: settings.eventRetentionDays,
    webhookDeliveriesDays: settings.webhookDeliveryRetentionDays,
  };
}

export type Overrides = Record<RetentionKind, number | null>;

const SELECT_OVERRIDES = `SELECT tenant_id, ${RETENTION_KINDS.map((kind) => `${RETENTION_COLUMNS[kind]} AS "${kind}"`).join(', ')} FROM tenant_retention`;

/** Every tenant's overrides (the maintenance worker's view). */
export async function allOverrides(sequelize: Sequelize): Promise<Map<string, Overrides>> {
  const rows = await sequelize.query<Overrides & { tenant_id: string }>(SELECT_OVERRIDES, { type: QueryTypes.SELECT });
  return new Map(rows.map(({ tenant_id: tenantId, ...overrides }) => [tenantId, overrides]));
}

async function overridesOf(sequelize: Sequelize, tenantId: string): Promise<Overrides> {
  const [row] = await sequelize.query<Overrides>(`${SELECT_OVERRIDES} WHERE tenant_id = :tenantId`, {
    type: QueryTypes.SELECT,
    replacements: { tenantId },
  });
  return (
    row ?? { logsDays: null, bodiesDays: null, rawMessagesDays: null, eventsDays: null, webhookDeliveriesDays: null }
  );
}

/** The override when it is shorter, else the platform default: an override never lengthens. */
export function effectivePolicy(platform: RetentionPolicy, overrides: Overrides): RetentionPolicy {
  const pick = (kind: RetentionKind) => Math.min(platform[kind], overrides[kind] ?? platform[kind]);
  return {
    logsDays: pick('logsDays'),
    bodiesDays: pick('bodiesDays'),
    rawMessagesDays: pick('rawMessagesDays'),
    eventsDays: pick('eventsDays'),
    webhookDeliveriesDays: pick('webhookDeliveriesDays'),
  };
}

async function present(sequelize: Sequelize, tenantId: string): Promise<TenantRetentionBody> {
  const [settings, overrides] = await Promise.all([getPlatformSettings(sequelize), overridesOf(sequelize, tenantId)]);
  const platform = platformPolicy(settings);
  return { overrides, platformDefault: platform, effective: effectivePolicy(platform, overrides) };
}

export async function getTenantRetention(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string },
): Promise<TenantRetentionBody> {
  const { sequelize } = deps.db;
  const { tenantId } = input;
  await requireTenantRole(deps.db.sequelize, tenantId, actor, 'viewer', {
    platformAdminMayRead: true,
    allowBlocked: true,
  });
  return present(sequelize, tenantId);
}

/** Owners and admins shorten (or clear) the tenant's horizons; longer than the platform's is refused. */
export async function updateTenantRetention(
  deps: TenantDeps,
  actor: Actor,
  input: { tenantId: string; body: UpdateTenantRetentionBody },
): Promise<TenantRetentionBody> {
  const { sequelize } = deps.db;
  const { tenantId, body: changes } = input;
  await requireTenantRole(deps.db.sequelize, tenantId, actor, 'admin');
  const platform = platformPolicy(await getPlatformSettings(sequelize));
  const kinds = RETENTION_KINDS.filter((kind) => changes[kind] !== undefined);
  const tooLong = kinds.filter((kind) => (changes[kind] ?? 0) > platform[kind]);
  if (tooLong.length) {
    throw new ValidationError(
      'A tenant may shorten retention, not lengthen it past the platform default.',
      tooLong.map((kind) => ({
        field: `body.${kind}`,
        message: `must be at most ${platform[kind]} (the platform default) or null`,
      })),
    );
  }
  const columns = kinds.map((kind) => RETENTION_COLUMNS[kind]);
  const replacements: Record<string, unknown> = { tenantId };
  for (const kind of kinds) replacements[kind] = changes[kind];
  await sequelize.transaction(async (transaction) => {
    await sequelize.query(
      `INSERT INTO tenant_retention (tenant_id, ${columns.join(', ')}) VALUES (:tenantId, ${kinds.map((kind) => `:${kind}`).join(', ')})
       ON CONFLICT (tenant_id) DO UPDATE SET ${columns.map((column) => `${column} = EXCLUDED.${column}`).join(', ')}, updated_at = now()`,
      { replacements, transaction },
    );
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'tenant.retention_updated',
        tenantId,
        adminId: actor.adminId,
        ip: actor.ip,
        target: tenantId,
        metadata: { ...changes },
      },
      transaction,
    );
  });
  return present(sequelize, tenantId);
}
