// Projects and their optional SMTP relay; the password is sealed (daemon/crypto/sealed.ts).
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';

export class Project extends Model<InferAttributes<Project>, InferCreationAttributes<Project>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare name: string;
  declare smtpHost: CreationOptional<string | null>;
  declare smtpPort: CreationOptional<number | null>;
  declare smtpSecure: CreationOptional<boolean>;
  declare smtpUser: CreationOptional<string | null>;
  declare smtpPassSealed: CreationOptional<string | null>;
  declare smtpVerifiedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export function initProjectModels(sequelize: Sequelize): void {
  Project.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      name: { type: DataTypes.TEXT, allowNull: false },
      smtpHost: { type: DataTypes.TEXT, allowNull: true },
      smtpPort: { type: DataTypes.INTEGER, allowNull: true },
      smtpSecure: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      smtpUser: { type: DataTypes.TEXT, allowNull: true },
      smtpPassSealed: { type: DataTypes.TEXT, allowNull: true },
      smtpVerifiedAt: { type: DataTypes.DATE, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'projects', underscored: true },
  );
}
