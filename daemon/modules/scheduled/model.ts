// Scheduled sends: the request and when to run it.
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';

export type ScheduledStatus = 'PENDING' | 'SENT' | 'FAILED' | 'CANCELLED';

export class ScheduledEmail extends Model<InferAttributes<ScheduledEmail>, InferCreationAttributes<ScheduledEmail>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare apiKeyId: CreationOptional<string | null>;
  declare adminId: CreationOptional<string | null>;
  declare testMode: CreationOptional<boolean>;
  declare status: CreationOptional<ScheduledStatus>;
  declare sendAt: Date;
  declare timezone: string;
  declare payload: Record<string, unknown>;
  declare emailId: CreationOptional<string | null>;
  declare error: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export function initScheduledModels(sequelize: Sequelize): void {
  ScheduledEmail.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      apiKeyId: { type: DataTypes.UUID, allowNull: true },
      adminId: { type: DataTypes.UUID, allowNull: true },
      testMode: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'PENDING' },
      sendAt: { type: DataTypes.DATE, allowNull: false },
      timezone: { type: DataTypes.TEXT, allowNull: false },
      payload: { type: DataTypes.JSONB, allowNull: false },
      emailId: { type: DataTypes.UUID, allowNull: true },
      error: { type: DataTypes.TEXT, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'scheduled_emails', underscored: true },
  );
}
