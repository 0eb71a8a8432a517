// A tenant's sending domain, its DKIM key and what the last DNS check saw for each record.
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';
import type { DnsRecordKind, DomainStatus, RecordStatus } from '../../../shared/schemas/domains.ts';

export interface RecordCheck {
  status: RecordStatus;
  found: string[];
  checkedAt: string;
}

export type RecordChecks = Partial<Record<DnsRecordKind, RecordCheck>>;

export interface DriftEntry {
  record: string;
  from: string;
  to: string;
}

export class Domain extends Model<InferAttributes<Domain>, InferCreationAttributes<Domain>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  /** ASCII (punycode), lower case, no trailing dot. */
  declare name: string;
  declare status: CreationOptional<DomainStatus>;
  declare dkimSelector: string;
  /** base64 DER SubjectPublicKeyInfo, exactly what goes in `p=`. */
  declare dkimPublicKey: string;
  /** PEM private key sealed with the daemon's encryption key. */
  declare dkimPrivateKeySealed: string;
  declare recordChecks: CreationOptional<RecordChecks>;
  declare verifiedAt: CreationOptional<Date | null>;
  declare lastCheckedAt: CreationOptional<Date | null>;
  declare driftDetectedAt: CreationOptional<Date | null>;
  declare drift: CreationOptional<DriftEntry[]>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export function initDomainModels(sequelize: Sequelize): void {
  Domain.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      name: { type: DataTypes.TEXT, allowNull: false },
      status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'pending' },
      dkimSelector: { type: DataTypes.TEXT, allowNull: false },
      dkimPublicKey: { type: DataTypes.TEXT, allowNull: false },
      dkimPrivateKeySealed: { type: DataTypes.TEXT, allowNull: false },
      recordChecks: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
      verifiedAt: { type: DataTypes.DATE, allowNull: true },
      lastCheckedAt: { type: DataTypes.DATE, allowNull: true },
      driftDetectedAt: { type: DataTypes.DATE, allowNull: true },
      drift: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'domains', underscored: true },
  );
}
