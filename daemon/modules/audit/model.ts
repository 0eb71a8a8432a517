// Security audit log: who did what to which sign-in, key, member or tenant.
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';

export class AuditEvent extends Model<InferAttributes<AuditEvent>, InferCreationAttributes<AuditEvent>> {
  declare id: CreationOptional<string>;
  /** Null for events of a person rather than a tenant (sign-ins, 2FA, password changes). */
  declare tenantId: CreationOptional<string | null>;
  declare adminId: CreationOptional<string | null>;
  declare apiKeyId: CreationOptional<string | null>;
  declare action: string;
  declare target: CreationOptional<string | null>;
  declare ip: CreationOptional<string | null>;
  declare metadata: CreationOptional<Record<string, unknown>>;
  declare createdAt: CreationOptional<Date>;
}

export function initAuditModels(sequelize: Sequelize): void {
  AuditEvent.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: true },
      adminId: { type: DataTypes.UUID, allowNull: true },
      apiKeyId: { type: DataTypes.UUID, allowNull: true },
      action: { type: DataTypes.TEXT, allowNull: false },
      target: { type: DataTypes.TEXT, allowNull: true },
      ip: { type: DataTypes.TEXT, allowNull: true },
      metadata: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
      createdAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'audit_events', underscored: true, updatedAt: false },
  );
}
