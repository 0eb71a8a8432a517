// Suppressed addresses, stored lower-cased, one row per tenant and address.
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';

export type SuppressionReason = 'bounce' | 'complaint' | 'unsubscribe' | 'manual';

export class Suppression extends Model<InferAttributes<Suppression>, InferCreationAttributes<Suppression>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare email: string;
  declare reason: SuppressionReason;
  declare emailId: CreationOptional<string | null>;
  declare detail: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export function initSuppressionModels(sequelize: Sequelize): void {
  Suppression.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      email: { type: DataTypes.TEXT, allowNull: false },
      reason: { type: DataTypes.TEXT, allowNull: false },
      emailId: { type: DataTypes.UUID, allowNull: true },
      detail: { type: DataTypes.TEXT, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'suppressions', underscored: true },
  );
}
