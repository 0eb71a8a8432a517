// Tenants, their members and their API keys.
import {
  DataTypes,
  QueryTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';
import type { ApiKeyEnvironment, MemberRole, PlanSlug } from '../../../shared/constants.ts';

export class Tenant extends Model<InferAttributes<Tenant>, InferCreationAttributes<Tenant>> {
  declare id: CreationOptional<string>;
  declare name: string;
  declare status: CreationOptional<'active' | 'blocked'>;
  declare plan: CreationOptional<PlanSlug>;
  declare monthlyLimit: CreationOptional<number | null>;
  declare sendingPausedAt: CreationOptional<Date | null>;
  declare sendingPausedReason: CreationOptional<string | null>;
  declare sendingAtRiskAt: CreationOptional<Date | null>;
  declare sendingAtRiskReason: CreationOptional<string | null>;
  declare trackOpens: CreationOptional<boolean | null>;
  declare trackClicks: CreationOptional<boolean | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class Membership extends Model<InferAttributes<Membership>, InferCreationAttributes<Membership>> {
  declare tenantId: string;
  declare adminId: string;
  declare role: MemberRole;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class ApiKey extends Model<InferAttributes<ApiKey>, InferCreationAttributes<ApiKey>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare name: string;
  /** Non-secret look-up part of the key: `svc_live_` + 12 characters. */
  declare prefix: string;
  declare keyHash: string;
  declare scopes: string[];
  declare environment: ApiKeyEnvironment;
  declare createdBy: CreationOptional<string | null>;
  declare lastUsedAt: CreationOptional<Date | null>;
  declare revokedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export function initTenantModels(sequelize: Sequelize): void {
  Tenant.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      name: { type: DataTypes.TEXT, allowNull: false },
      status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'active' },
      plan: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'free' },
      monthlyLimit: { type: DataTypes.INTEGER, allowNull: true },
      sendingPausedAt: { type: DataTypes.DATE, allowNull: true },
      sendingPausedReason: { type: DataTypes.TEXT, allowNull: true },
      sendingAtRiskAt: { type: DataTypes.DATE, allowNull: true },
      sendingAtRiskReason: { type: DataTypes.TEXT, allowNull: true },
      trackOpens: { type: DataTypes.BOOLEAN, allowNull: true },
      trackClicks: { type: DataTypes.BOOLEAN, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'tenants', underscored: true },
  );
  Membership.init(
    {
      tenantId: { type: DataTypes.UUID, primaryKey: true },
      adminId: { type: DataTypes.UUID, primaryKey: true },
      role: { type: DataTypes.TEXT, allowNull: false },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'memberships', underscored: true },
  );
  ApiKey.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      name: { type: DataTypes.TEXT, allowNull: false },
      prefix: { type: DataTypes.TEXT, allowNull: false, unique: true },
      keyHash: { type: DataTypes.TEXT, allowNull: false },
      scopes: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false, defaultValue: [] },
      environment: { type: DataTypes.TEXT, allowNull: false },
      createdBy: { type: DataTypes.UUID, allowNull: true },
      lastUsedAt: { type: DataTypes.DATE, allowNull: true },
      revokedAt: { type: DataTypes.DATE, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'api_keys', underscored: true },
  );
}

/**
 * An admin's role in a tenant and the tenant's status, in one round trip: the auth plugin asks
 * this on every session request that acts inside a tenant. Null when not a member.
 */
export async function findMembershipWithTenantStatus(
  tenantId: string,
  adminId: string,
): Promise<{ role: MemberRole; tenantStatus: 'active' | 'blocked' } | null> {
  const rows = await Membership.sequelize!.query<{ role: MemberRole; tenantStatus: 'active' | 'blocked' }>(
    `SELECT m.role, t.status AS "tenantStatus"
       FROM memberships m JOIN tenants t ON t.id = m.tenant_id
      WHERE m.tenant_id = :tenantId AND m.admin_id = :adminId`,
    { replacements: { tenantId, adminId }, type: QueryTypes.SELECT },
  );
  return rows[0] ?? null;
}
