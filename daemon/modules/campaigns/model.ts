// Campaign rows, and the two reads of the templates area's tables a campaign needs.
import {
  DataTypes,
  Model,
  Op,
  QueryTypes,
  type CreationOptional,
  type InferAttributes,
  type InferCreationAttributes,
  type Sequelize,
  type Transaction,
} from 'sequelize';
import type { CAMPAIGN_STATUSES } from '../../../shared/constants.ts';
import type { Audience } from '../../../shared/schemas/campaigns.ts';

export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export class CampaignRow extends Model<InferAttributes<CampaignRow>, InferCreationAttributes<CampaignRow>> {
  declare id: CreationOptional<string>;
  declare tenantId: string;
  declare name: string;
  declare templateId: string;
  declare audience: Audience;
  declare status: CampaignStatus;
  declare sendAt: CreationOptional<Date | null>;
  declare cancelledAt: CreationOptional<Date | null>;
  declare createdBy: CreationOptional<string | null>;
  declare fromAddress: CreationOptional<string | null>;
  declare sentAt: CreationOptional<Date | null>;
  declare acceptedCount: CreationOptional<number>;
  declare rejectedCount: CreationOptional<number>;
  declare lastError: CreationOptional<string | null>;
  declare testMode: CreationOptional<boolean>;
  declare expansionCursor: CreationOptional<string | null>;
  declare audienceTotal: CreationOptional<number | null>;
  declare cancelledCount: CreationOptional<number>;
  declare startedAt: CreationOptional<Date | null>;
  declare apiKeyId: CreationOptional<string | null>;
  declare createdAt: CreationOptional<Date>;
  declare updatedAt: CreationOptional<Date>;
}

export function initCampaignModels(sequelize: Sequelize): void {
  CampaignRow.init(
    {
      id: { type: DataTypes.UUID, primaryKey: true, defaultValue: DataTypes.UUIDV4 },
      tenantId: { type: DataTypes.UUID, allowNull: false },
      name: { type: DataTypes.TEXT, allowNull: false },
      templateId: { type: DataTypes.UUID, allowNull: false },
      audience: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
      status: { type: DataTypes.TEXT, allowNull: false },
      sendAt: { type: DataTypes.DATE, allowNull: true },
      cancelledAt: { type: DataTypes.DATE, allowNull: true },
      createdBy: { type: DataTypes.UUID, allowNull: true },
      fromAddress: { type: DataTypes.TEXT, allowNull: true },
      sentAt: { type: DataTypes.DATE, allowNull: true },
      acceptedCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      rejectedCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      lastError: { type: DataTypes.TEXT, allowNull: true },
      testMode: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
      expansionCursor: { type: DataTypes.UUID, allowNull: true },
      audienceTotal: { type: DataTypes.INTEGER, allowNull: true },
      cancelledCount: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      startedAt: { type: DataTypes.DATE, allowNull: true },
      apiKeyId: { type: DataTypes.UUID, allowNull: true },
      createdAt: DataTypes.DATE,
      updatedAt: DataTypes.DATE,
    },
    { sequelize, tableName: 'campaigns', underscored: true },
  );
}

/** The tenant's template (id and default locale), or null: another tenant's template is not found. */
export async function findTenantTemplate(
  sequelize: Sequelize,
  tenantId: string,
  templateId: string,
): Promise<{ id: string; defaultLocale: string } | null> {
  const [row] = await sequelize.query<{ id: string; default_locale: string }>(
    'SELECT id, default_locale FROM templates WHERE tenant_id = :tenantId AND id = :templateId',
    { replacements: { tenantId, templateId }, type: QueryTypes.SELECT },
  );
  return row ? { id: row.id, defaultLocale: row.default_locale } : null;
}

/** Lower-cased locales in which the template has a published version. */
export async function publishedLocales(
  sequelize: Sequelize,
  tenantId: string,
  templateId: string,
): Promise<Set<string>> {
  const rows = await sequelize.query<{ locale: string }>(
    'SELECT DISTINCT lower(locale) AS locale FROM template_versions WHERE tenant_id = :tenantId AND template_id = :templateId AND published_at IS NOT NULL',
    { replacements: { tenantId, templateId }, type: QueryTypes.SELECT },
  );
  return new Set(rows.map((row) => row.locale));
}

export interface SendClaim {
  tenantId: string;
  id: string;
  fromAddress: string;
  /** The key the send's logs are attributed to (null for an admin session or the scheduler). */
  apiKeyId: string | null;
  /** Null keeps the mode the campaign was created with (a scheduled campaign). */
  testMode: boolean | null;
  audienceTotal: number;
}

/**
 * DRAFT or SCHEDULED → SENDING in one statement, so two concurrent sends cannot both start. The
 * position and counters start over; the caller enqueues the expansion job in the same transaction.
 */
export async function claimForSending(
  sequelize: Sequelize,
  claim: SendClaim,
  transaction: Transaction,
): Promise<boolean> {
  const rows = await sequelize.query<{ id: string }>(
    `UPDATE campaigns SET status = 'SENDING', from_address = :fromAddress, last_error = NULL, api_key_id = :apiKeyId,
            test_mode = COALESCE(CAST(:testMode AS boolean), test_mode), audience_total = :audienceTotal,
            expansion_cursor = NULL, accepted_count = 0, rejected_count = 0, cancelled_count = 0,
            started_at = now(), updated_at = now()
     WHERE tenant_id = :tenantId AND id = :id AND status IN ('DRAFT', 'SCHEDULED') RETURNING id`,
    { replacements: { ...claim }, type: QueryTypes.SELECT, transaction },
  );
  return rows.length === 1;
}

/** The tenant's template slug (published versions are resolved by slug and locale). */
export async function templateSlug(sequelize: Sequelize, tenantId: string, templateId: string): Promise<string | null> {
  const [row] = await sequelize.query<{ slug: string }>(
    'SELECT slug FROM templates WHERE tenant_id = :tenantId AND id = :templateId',
    {
      replacements: { tenantId, templateId },
      type: QueryTypes.SELECT,
    },
  );
  return row?.slug ?? null;
}

/** Scheduled campaigns whose time has come, oldest first. */
export async function dueCampaigns(limit: number): Promise<CampaignRow[]> {
  return CampaignRow.findAll({
    where: { status: 'SCHEDULED', sendAt: { [Op.lte]: new Date() } },
    order: [['sendAt', 'ASC']],
    limit,
  });
}
