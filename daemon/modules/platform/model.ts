// Platform settings: one row per setting, the value as JSON.
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';

export class PlatformSetting extends Model<InferAttributes<PlatformSetting>, InferCreationAttributes<PlatformSetting>> {
  declare key: string;
  declare value: unknown;
  declare updatedAt: CreationOptional<Date>;
}

export function initPlatformModels(sequelize: Sequelize): void {
  PlatformSetting.init(
    {
      key: { type: DataTypes.TEXT, primaryKey: true },
      value: { type: DataTypes.JSONB, allowNull: false },
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'platform_settings', underscored: true, createdAt: false },
  );
}
