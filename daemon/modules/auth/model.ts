// Admins (people who sign in), their refresh tokens and their one-time tokens.
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';

export class Admin extends Model<InferAttributes<Admin>, InferCreationAttributes<Admin>> {
  declare id: CreationOptional<string>;
  declare email: string;
  declare name: CreationOptional<string | null>;
  declare passwordHash: string;
  declare emailVerifiedAt: CreationOptional<Date | null>;
  declare isPlatformAdmin: CreationOptional<boolean>;
  declare totpSecret: CreationOptional<string | null>;
  declare totpPendingSecret: CreationOptional<string | null>;
  declare totpEnabled: CreationOptional<boolean>;
  declare totpLastStep: CreationOptional<number | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class RefreshToken extends Model<InferAttributes<RefreshToken>, InferCreationAttributes<RefreshToken>> {
  declare id: CreationOptional<string>;
  declare adminId: string;
  declare familyId: string;
  declare tokenHash: string;
  declare expiresAt: Date;
  declare revokedAt: CreationOptional<Date | null>;
  declare replacedBy: CreationOptional<string | null>;
  declare userAgent: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
}

export type AuthTokenPurpose = 'reset-password' | 'verify-email' | 'login-challenge';

export class AuthToken extends Model<InferAttributes<AuthToken>, InferCreationAttributes<AuthToken>> {
  declare id: CreationOptional<string>;
  declare adminId: string;
  declare purpose: AuthTokenPurpose;
  declare tokenHash: string;
  declare expiresAt: Date;
  declare usedAt: CreationOptional<Date | null>;
  /** Wrong codes sent with this token (login challenges). */
  declare attempts: CreationOptional<number>;
  declare createdAt: CreationOptional<Date>;
}

export function initAuthModels(sequelize: Sequelize): void {
  Admin.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      email: { type: DataTypes.TEXT, allowNull: false },
      name: { type: DataTypes.TEXT, allowNull: true },
      passwordHash: { type: DataTypes.TEXT, allowNull: false },
      emailVerifiedAt: { type: DataTypes.DATE, allowNull: true },
      isPlatformAdmin: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      totpSecret: { type: DataTypes.TEXT, allowNull: true },
      totpPendingSecret: { type: DataTypes.TEXT, allowNull: true },
      totpEnabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      totpLastStep: { type: DataTypes.BIGINT, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'admins', underscored: true },
  );
  RefreshToken.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      adminId: { type: DataTypes.UUID, allowNull: false },
      familyId: { type: DataTypes.UUID, allowNull: false },
      tokenHash: { type: DataTypes.TEXT, allowNull: false, unique: true },
      expiresAt: { type: DataTypes.DATE, allowNull: false },
      revokedAt: { type: DataTypes.DATE, allowNull: true },
      replacedBy: { type: DataTypes.UUID, allowNull: true },
      userAgent: { type: DataTypes.TEXT, allowNull: true },
      createdAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'refresh_tokens', underscored: true, updatedAt: false },
  );
  AuthToken.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      adminId: { type: DataTypes.UUID, allowNull: false },
      purpose: { type: DataTypes.TEXT, allowNull: false },
      tokenHash: { type: DataTypes.TEXT, allowNull: false, unique: true },
      expiresAt: { type: DataTypes.DATE, allowNull: false },
      usedAt: { type: DataTypes.DATE, allowNull: true },
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      createdAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'auth_tokens', underscored: true, updatedAt: false },
  );
}
