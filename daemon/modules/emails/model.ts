// Email logs (one per accepted message) and their timeline rows.
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';
import type { EmailStatus } from '../../../shared/constants.ts';
import type { NormalizedAttachment } from '../../mail/compose.ts';

export class EmailLog extends Model<InferAttributes<EmailLog>, InferCreationAttributes<EmailLog>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare apiKeyId: CreationOptional<string | null>;
  declare projectId: CreationOptional<string | null>;
  declare status: CreationOptional<EmailStatus>;
  declare messageId: string;
  declare fromAddress: string;
  declare toAddresses: string[];
  declare ccAddresses: CreationOptional<string[]>;
  declare bccAddresses: CreationOptional<string[]>;
  declare replyTo: CreationOptional<string[]>;
  declare subject: CreationOptional<string>;
  declare htmlBody: CreationOptional<string | null>;
  declare textBody: CreationOptional<string | null>;
  declare templateVersionId: CreationOptional<string | null>;
  declare data: CreationOptional<Record<string, unknown> | null>;
  declare locale: CreationOptional<string | null>;
  declare headers: CreationOptional<Record<string, string>>;
  declare sentHeaders: CreationOptional<Record<string, string> | null>;
  declare tags: CreationOptional<string[]>;
  declare metadata: CreationOptional<Record<string, unknown>>;
  declare attachments: CreationOptional<NormalizedAttachment[]>;
  declare trackOpens: CreationOptional<boolean>;
  declare trackClicks: CreationOptional<boolean>;
  declare testMode: CreationOptional<boolean>;
  declare captured: CreationOptional<boolean>;
  declare attempts: CreationOptional<number>;
  declare error: CreationOptional<string | null>;
  declare smtpResponse: CreationOptional<string | null>;
  declare resentFrom: CreationOptional<string | null>;
  declare scheduledEmailId: CreationOptional<string | null>;
  declare sentAt: CreationOptional<Date | null>;
  /** Set by retention when the bodies, template data and attachment contents were removed. */
  declare bodiesRemovedAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class EmailEvent extends Model<InferAttributes<EmailEvent>, InferCreationAttributes<EmailEvent>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare emailId: string;
  declare type: string;
  declare data: CreationOptional<Record<string, unknown>>;
  declare createdAt: CreationOptional<Date>;
}

const ARRAY = DataTypes.ARRAY(DataTypes.TEXT);

export function initEmailModels(sequelize: Sequelize): void {
  EmailLog.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      apiKeyId: { type: DataTypes.UUID, allowNull: true },
      projectId: { type: DataTypes.UUID, allowNull: true },
      status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'QUEUED' },
      messageId: { type: DataTypes.TEXT, allowNull: false },
      fromAddress: { type: DataTypes.TEXT, allowNull: false },
      toAddresses: { type: ARRAY, allowNull: false },
      ccAddresses: { type: ARRAY, allowNull: false, defaultValue: [] },
      bccAddresses: { type: ARRAY, allowNull: false, defaultValue: [] },
      replyTo: { type: ARRAY, allowNull: false, defaultValue: [] },
      subject: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
      htmlBody: { type: DataTypes.TEXT, allowNull: true },
      textBody: { type: DataTypes.TEXT, allowNull: true },
      templateVersionId: { type: DataTypes.UUID, allowNull: true },
      data: { type: DataTypes.JSONB, allowNull: true },
      locale: { type: DataTypes.TEXT, allowNull: true },
      headers: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
      sentHeaders: { type: DataTypes.JSONB, allowNull: true },
      tags: { type: ARRAY, allowNull: false, defaultValue: [] },
      metadata: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
      attachments: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
      trackOpens: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      trackClicks: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      testMode: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      captured: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      error: { type: DataTypes.TEXT, allowNull: true },
      smtpResponse: { type: DataTypes.TEXT, allowNull: true },
      resentFrom: { type: DataTypes.UUID, allowNull: true },
      scheduledEmailId: { type: DataTypes.UUID, allowNull: true },
      sentAt: { type: DataTypes.DATE, allowNull: true },
      bodiesRemovedAt: { type: DataTypes.DATE, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'email_logs', underscored: true },
  );
  EmailEvent.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      emailId: { type: DataTypes.UUID, allowNull: false },
      type: { type: DataTypes.TEXT, allowNull: false },
      data: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
      createdAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'email_events', underscored: true, updatedAt: false },
  );
}
