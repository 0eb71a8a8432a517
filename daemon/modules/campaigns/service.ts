// Campaign rules: a campaign names a template of the tenant and an audience of opted-in contacts;
// with a future sendAt it is SCHEDULED, else DRAFT. Locale coverage tells which audience locales the
// template has a published version for.
import type { Database } from '../../db/index.ts';
import { NotFoundError, UnprocessableError, ValidationError } from '../../errors.ts';
import type { TenantContext } from '../../context.ts';
import type {
  Audience,
  Campaign,
  CampaignDetail,
  CampaignListQuery,
  CreateCampaignBody,
  LocaleCoverage,
} from '../../../shared/schemas/campaigns.ts';
import { normalizeSend } from '../emails/validate.ts';
import { countContacts, countContactsByLocale, type ContactFilter } from '../contacts/model.ts';
import { findTenantTemplate, publishedLocales, type CampaignRow } from './model.ts';
import { modelsOf } from '../models.ts';
import { findPage } from '../../db/paging.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Contacts the expansion has not reached yet: the audience size when the send started minus the
 * contacts handled since (an estimate while contacts join or leave the audience mid-send).
 */
function remainingOf(row: CampaignRow): number | null {
  if (row.status === 'SENT' || row.status === 'CANCELLED')
    return row.audienceTotal === null || row.audienceTotal === undefined ? null : 0;
  if (row.status !== 'SENDING' || row.audienceTotal === null || row.audienceTotal === undefined) return null;
  return Math.max(0, row.audienceTotal - (row.acceptedCount ?? 0) - (row.rejectedCount ?? 0));
}

export function toCampaign(row: CampaignRow): Campaign {
  return {
    id: row.id,
    name: row.name,
    templateId: row.templateId,
    audience: row.audience ?? {},
    status: row.status,
    sendAt: row.sendAt?.toISOString() ?? null,
    cancelledAt: row.cancelledAt?.toISOString() ?? null,
    sentAt: row.sentAt?.toISOString() ?? null,
    from: row.fromAddress ?? null,
    accepted: row.acceptedCount ?? 0,
    rejected: row.rejectedCount ?? 0,
    cancelledSends: row.cancelledCount ?? 0,
    total: row.audienceTotal ?? null,
    remaining: remainingOf(row),
    startedAt: row.startedAt?.toISOString() ?? null,
    lastError: row.lastError ?? null,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** Campaigns go to opted-in contacts only. */
export function audienceFilter(tenantId: string, audience: Audience): ContactFilter {
  return { tenantId, optIn: true, tag: audience.tag, locale: audience.locale, projectId: audience.projectId };
}

/** What the campaign services take: the routes pass the module's deps, the dispatcher its own. */
export interface CampaignDeps {
  db: Pick<Database, 'sequelize'>;
}

export async function findCampaign(deps: CampaignDeps, tenantId: string, id: string): Promise<CampaignRow> {
  const row = UUID.test(id) ? await modelsOf(deps.db.sequelize).CampaignRow.findOne({ where: { tenantId, id } }) : null;
  if (!row) throw new NotFoundError(`Campaign "${id}"`);
  return row;
}

export async function createCampaign(
  deps: CampaignDeps,
  ctx: TenantContext,
  body: CreateCampaignBody,
): Promise<Campaign> {
  const { sequelize } = deps.db;
  const sendAt = body.sendAt !== undefined ? new Date(body.sendAt) : null;
  if (sendAt && sendAt.getTime() <= Date.now()) {
    throw new ValidationError('sendAt must be in the future; leave it out to create a draft.', [
      { field: 'sendAt', message: 'must be in the future' },
    ]);
  }
  if (sendAt && body.from === undefined) {
    throw new ValidationError('A scheduled campaign needs its sender: add from.', [
      { field: 'from', message: 'is required with sendAt' },
    ]);
  }
  // The pipeline's own sender check, with a well-formed stand-in message so that only `from` can fail.
  if (body.from !== undefined)
    normalizeSend({ from: body.from, to: 'recipient@example.com', subject: '-', textBody: '-' });
  if (!(await findTenantTemplate(sequelize, ctx.tenantId, body.templateId))) {
    throw new UnprocessableError(
      `The template ${body.templateId} does not exist in this tenant.`,
      'TEMPLATE_NOT_FOUND',
    );
  }
  const row = await modelsOf(sequelize).CampaignRow.create({
    tenantId: ctx.tenantId,
    name: body.name,
    templateId: body.templateId,
    audience: body.audience,
    status: sendAt ? 'SCHEDULED' : 'DRAFT',
    sendAt,
    fromAddress: body.from ?? null,
    testMode: ctx.testMode,
    createdBy: ctx.adminId,
  });
  return toCampaign(row);
}

export async function listCampaigns(deps: CampaignDeps, ctx: TenantContext, query: CampaignListQuery) {
  const where = { tenantId: ctx.tenantId, ...(query.status ? { status: query.status } : {}) };
  return findPage(
    modelsOf(deps.db.sequelize).CampaignRow,
    {
      where,
      order: [
        ['createdAt', 'DESC'],
        ['id', 'DESC'],
      ],
    },
    query,
    (rows) => rows.map(toCampaign),
  );
}

export async function getCampaign(
  deps: CampaignDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<CampaignDetail> {
  const row = await findCampaign(deps, ctx.tenantId, input.id);
  return {
    ...toCampaign(row),
    audienceSize: await countContacts(deps.db.sequelize, audienceFilter(ctx.tenantId, row.audience ?? {})),
  };
}

/** The published locale a send for `locale` would use without an exact version: the language, then the default. */
function fallbackFor(locale: string, published: Set<string>, defaultLocale: string): string | null {
  const language = locale.split('-')[0];
  if (language !== locale && published.has(language)) return language;
  return published.has(defaultLocale) ? defaultLocale : null;
}

export async function localeCoverage(
  deps: CampaignDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<LocaleCoverage[]> {
  const { sequelize } = deps.db;
  const row = await findCampaign(deps, ctx.tenantId, input.id);
  const template = await findTenantTemplate(sequelize, ctx.tenantId, row.templateId);
  const published = template ? await publishedLocales(sequelize, ctx.tenantId, template.id) : new Set<string>();
  const defaultLocale = (template?.defaultLocale ?? 'en').toLowerCase();
  const counts = new Map<string, number>();
  for (const group of await countContactsByLocale(sequelize, audienceFilter(ctx.tenantId, row.audience ?? {}))) {
    const locale = group.locale ?? defaultLocale;
    counts.set(locale, (counts.get(locale) ?? 0) + group.contacts);
  }
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([locale, contacts]) => {
      const exact = published.has(locale);
      return {
        locale,
        contacts,
        hasPublishedVersion: exact,
        fallbackLocale: exact ? null : fallbackFor(locale, published, defaultLocale),
      };
    });
}
