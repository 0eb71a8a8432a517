// Plans, subscriptions, the AI-token ledger and processed Stripe events.
import {
  DataTypes,
  Model,
  QueryTypes,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
  type Transaction,
} from 'sequelize';

export class BillingPlanRow extends Model<InferAttributes<BillingPlanRow>, InferCreationAttributes<BillingPlanRow>> {
  declare slug: string;
  declare name: string;
  declare monthlyEmails: number;
  declare aiTokens: number;
  declare stripePriceId: CreationOptional<string | null>;
  declare active: CreationOptional<boolean>;
  declare sortOrder: CreationOptional<number>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export class SubscriptionRow extends Model<InferAttributes<SubscriptionRow>, InferCreationAttributes<SubscriptionRow>> {
  declare tenantId: string;
  declare planSlug: string;
  declare status: string;
  declare stripeCustomerId: CreationOptional<string | null>;
  declare stripeSubscriptionId: CreationOptional<string | null>;
  declare currentPeriodStart: CreationOptional<Date | null>;
  declare currentPeriodEnd: CreationOptional<Date | null>;
  declare cancelAtPeriodEnd: CreationOptional<boolean>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export function initBillingModels(sequelize: Sequelize): void {
  BillingPlanRow.init(
    {
      slug: { type: DataTypes.TEXT, primaryKey: true },
      name: { type: DataTypes.TEXT, allowNull: false },
      monthlyEmails: { type: DataTypes.INTEGER, allowNull: false },
      aiTokens: { type: DataTypes.INTEGER, allowNull: false },
      stripePriceId: { type: DataTypes.TEXT, allowNull: true },
      active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      sortOrder: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'billing_plans', underscored: true },
  );
  SubscriptionRow.init(
    {
      tenantId: { type: DataTypes.UUID, primaryKey: true },
      planSlug: { type: DataTypes.TEXT, allowNull: false },
      status: { type: DataTypes.TEXT, allowNull: false },
      stripeCustomerId: { type: DataTypes.TEXT, allowNull: true },
      stripeSubscriptionId: { type: DataTypes.TEXT, allowNull: true },
      currentPeriodStart: { type: DataTypes.DATE, allowNull: true },
      currentPeriodEnd: { type: DataTypes.DATE, allowNull: true },
      cancelAtPeriodEnd: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'subscriptions', underscored: true },
  );
}

export async function grantAiTokens(
  sequelize: Sequelize,
  grant: { tenantId: string; tokens: number; reason: string; planSlug: string; stripeEventId: string },
  transaction?: Transaction,
): Promise<void> {
  if (grant.tokens <= 0) return;
  await sequelize.query(
    `INSERT INTO ai_token_ledger (tenant_id, delta, reason, plan_slug, stripe_event_id) VALUES (:tenantId, :tokens, :reason, :planSlug, :stripeEventId)`,
    { replacements: grant, transaction },
  );
}

export async function aiTokenBalance(sequelize: Sequelize, tenantId: string): Promise<number> {
  const [row] = await sequelize.query<{ balance: string | null }>(
    `SELECT COALESCE(SUM(delta), 0) AS balance FROM ai_token_ledger WHERE tenant_id = :tenantId`,
    {
      replacements: { tenantId },
      type: QueryTypes.SELECT,
    },
  );
  return Number(row?.balance ?? 0);
}

/**
 * Records a Stripe event id inside the transaction that applies it. False when it was already
 * recorded: Stripe delivers at least once, so a repeat must change nothing.
 */
export async function claimBillingEvent(
  sequelize: Sequelize,
  event: { id: string; type: string },
  transaction: Transaction,
): Promise<boolean> {
  const rows = await sequelize.query<{ id: string }>(
    `INSERT INTO billing_events (id, type, outcome) VALUES (:id, :type, 'received') ON CONFLICT (id) DO NOTHING RETURNING id`,
    { replacements: event, type: QueryTypes.SELECT, transaction },
  );
  return rows.length === 1;
}

export async function recordBillingOutcome(
  sequelize: Sequelize,
  eventId: string,
  outcome: { tenantId: string | null; outcome: string },
  transaction: Transaction,
): Promise<void> {
  await sequelize.query(`UPDATE billing_events SET tenant_id = :tenantId, outcome = :outcome WHERE id = :eventId`, {
    replacements: { eventId, ...outcome },
    transaction,
  });
}
