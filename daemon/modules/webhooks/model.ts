// Webhook endpoints and deliveries (tables from migrations/0041-webhooks.ts).
import {
  DataTypes,
  Model,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
} from 'sequelize';
import type { WebhookDeliveryStatus } from '../../../shared/schemas/webhooks.ts';

export class WebhookEndpointRecord extends Model<
  InferAttributes<WebhookEndpointRecord>,
  InferCreationAttributes<WebhookEndpointRecord>
> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare url: string;
  declare events: string[];
  /** AES-256-GCM with the daemon's encryption key: the secret must be readable to sign. */
  declare secretEncrypted: string;
  declare enabled: CreationOptional<boolean>;
  declare consecutiveFailures: CreationOptional<number>;
  declare disabledReason: CreationOptional<string | null>;
  declare disabledAt: CreationOptional<Date | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class WebhookDeliveryRecord extends Model<
  InferAttributes<WebhookDeliveryRecord>,
  InferCreationAttributes<WebhookDeliveryRecord>
> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare endpointId: string;
  declare eventId: string | null;
  declare eventType: string;
  declare payload: Record<string, unknown>;
  declare status: CreationOptional<WebhookDeliveryStatus>;
  declare attempt: CreationOptional<number>;
  declare maxAttempts: CreationOptional<number>;
  declare statusCode: CreationOptional<number | null>;
  declare responseBody: CreationOptional<string | null>;
  declare error: CreationOptional<string | null>;
  declare deliveredAt: CreationOptional<Date | null>;
  declare nextAttemptAt: CreationOptional<Date | null>;
  declare replayOf: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export function initWebhookModels(sequelize: Sequelize): void {
  WebhookEndpointRecord.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      url: { type: DataTypes.TEXT, allowNull: false },
      events: { type: DataTypes.ARRAY(DataTypes.TEXT), allowNull: false },
      secretEncrypted: { type: DataTypes.TEXT, allowNull: false },
      enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      consecutiveFailures: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      disabledReason: { type: DataTypes.TEXT, allowNull: true },
      disabledAt: { type: DataTypes.DATE, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'webhook_endpoints', underscored: true },
  );
  WebhookDeliveryRecord.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      endpointId: { type: DataTypes.UUID, allowNull: false },
      eventId: { type: DataTypes.UUID, allowNull: true },
      eventType: { type: DataTypes.TEXT, allowNull: false },
      payload: { type: DataTypes.JSON, allowNull: false },
      status: { type: DataTypes.TEXT, allowNull: false, defaultValue: 'pending' },
      attempt: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      maxAttempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 5 },
      statusCode: { type: DataTypes.INTEGER, allowNull: true },
      responseBody: { type: DataTypes.TEXT, allowNull: true },
      error: { type: DataTypes.TEXT, allowNull: true },
      deliveredAt: { type: DataTypes.DATE, allowNull: true },
      nextAttemptAt: { type: DataTypes.DATE, allowNull: true },
      replayOf: { type: DataTypes.UUID, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'webhook_deliveries', underscored: true },
  );
}
