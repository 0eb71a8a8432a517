// The campaign expansion job (queue 'campaign', handler registered in daemon/jobs/handlers.ts).
//
// The audience is walked in id order, CONTACTS_PER_CHUNK contacts at a time. A chunk reads the
// campaign's position and the next contacts after it, hands them to the send pipeline, and the
// pipeline writes the chunk's sends and the new position (with the counters) in ONE transaction
// (acceptSends' inTransaction). The position is written compare-and-set: only if the campaign is
// still SENDING at the position the chunk started from, else the transaction rolls back with the
// chunk's sends. A worker killed at any point therefore leaves either the whole chunk (sends and
// position) or none of it; the queue's lease reclaim runs the job again and it resumes after the
// last committed chunk: no contact is sent twice by the expansion and none is skipped. Two runs of
// the same job (a lease lost by a live worker) cannot both commit one chunk, and a cancel that
// commits first makes the chunk in flight roll back.
//
// Refusals of the pipeline (quota, sending pause, unverified domain …): with nothing accepted yet
// the campaign returns to DRAFT (SCHEDULED if it has a sendAt) with the sentence in lastError;
// part-way it stays SENDING with lastError and the job is retried with backoff (up to an hour),
// so it continues once the quota cycle resets or the pause is lifted, or it is cancelled. The
// quota is exact per recipient: a chunk that would cross the hard stop is cut to what still fits.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { ApiError, UnprocessableError } from '../../errors.ts';
import type { TenantContext } from '../../plugins/access.ts';
import type { JobOutcome, JobRow, WorkerContext } from '../../queue/types.ts';
import { acceptSends, type SendDeps } from '../emails/service.ts';
import { normalizeSend, type NormalizedSend } from '../emails/validate.ts';
import { resolvePublishedVersion, type PublishedVersion } from '../templates/render.ts';
import { findAudienceChunk, type AudienceContact } from '../contacts/model.ts';
import { QUOTA_HARD_STOP_RATIO, quotaStatus } from '../quota/service.ts';
import type { BatchAccepted } from '../../../shared/schemas/emails.ts';
import { CampaignRow, templateSlug } from './model.ts';
import { audienceFilter } from './service.ts';

export const CONTACTS_PER_CHUNK = 1000;
const RETRY_BASE_MS = 60_000;
const RETRY_MAX_MS = 60 * 60_000;

type Step = 'more' | 'finished' | 'stopped';

function templateData(contact: AudienceContact): Record<string, unknown> {
  return {
    ...contact.attributes,
    contact: {
      email: contact.email,
      externalId: contact.externalId,
      firstName: contact.firstName,
      lastName: contact.lastName,
      locale: contact.locale,
      attributes: contact.attributes,
    },
  };
}

/** Published versions by lower-cased locale, resolved once per job run (language, then default locale). */
type VersionCache = Map<string, PublishedVersion | null>;

async function versionFor(sequelize: Sequelize, tenantId: string, slug: string, locale: string | null, cache: VersionCache) {
  const key = (locale ?? '').toLowerCase();
  if (!cache.has(key)) cache.set(key, await resolvePublishedVersion(sequelize, tenantId, slug, locale));
  return cache.get(key) ?? null;
}

/** Who the sends are made as: the campaign's sender (key, test mode), recorded when it was started. */
function senderOf(campaign: CampaignRow): TenantContext {
  return {
    tenantId: campaign.tenantId,
    adminId: campaign.createdBy ?? null,
    apiKeyId: campaign.apiKeyId ?? null,
    role: null,
    isPlatformAdmin: false,
    testMode: campaign.testMode,
  };
}

interface Run {
  deps: SendDeps;
  tenantId: string;
  campaignId: string;
  versions: VersionCache;
}

/** The chunk's position moved under it (another run of the job, or a cancel): its sends roll back. */
class PositionMoved extends Error {}

interface Advance {
  from: string | null;
  to: string | null;
  accepted: number;
  rejected: number;
  finished?: boolean;
}

/**
 * Moves the position from `from` to `to` and adds the chunk's counts, only if the campaign is still
 * SENDING at `from` (compare-and-set); false otherwise.
 */
async function advance(sequelize: Sequelize, run: Run, step: Advance, transaction?: Transaction): Promise<boolean> {
  const rows = await sequelize.query(
    `UPDATE campaigns SET expansion_cursor = CAST(:to AS uuid), accepted_count = accepted_count + :accepted,
            rejected_count = rejected_count + :rejected, last_error = NULL, updated_at = now()
            ${step.finished ? `, status = 'SENT', sent_at = now()` : ''}
      WHERE id = :id AND tenant_id = :tenantId AND status = 'SENDING' AND expansion_cursor IS NOT DISTINCT FROM CAST(:from AS uuid)
      RETURNING id`,
    { replacements: { ...step, id: run.campaignId, tenantId: run.tenantId }, type: QueryTypes.SELECT, transaction },
  );
  return rows.length === 1;
}

/** One chunk (see the header): reads first, then the sends and the new position in one transaction. */
async function expandChunk(run: Run, limit: number): Promise<Step> {
  const { sequelize } = run.deps;
  const campaign = await CampaignRow.findOne({ where: { id: run.campaignId, tenantId: run.tenantId } });
  if (!campaign || campaign.status !== 'SENDING') return 'stopped';
  const from = campaign.expansionCursor ?? null;
  const contacts = await findAudienceChunk(sequelize, audienceFilter(run.tenantId, campaign.audience ?? {}), from, limit);
  if (contacts.length === 0) {
    return (await advance(sequelize, run, { from, to: from, accepted: 0, rejected: 0, finished: true })) ? 'finished' : 'more';
  }
  const slug = await templateSlug(sequelize, run.tenantId, campaign.templateId);
  if (!slug) throw new UnprocessableError('The campaign\'s template no longer exists.', 'TEMPLATE_NOT_FOUND');
  const sender = campaign.fromAddress ?? '';
  const sends: NormalizedSend[] = [];
  const refused: { to: string; reason: string }[] = [];
  for (const contact of contacts) {
    const version = await versionFor(sequelize, run.tenantId, slug, contact.locale, run.versions);
    if (!version) {
      refused.push({ to: contact.email, reason: `no published version for locale ${contact.locale ?? '(none)'} or the default locale` });
      continue;
    }
    sends.push(normalizeSend({
      from: sender,
      to: contact.email,
      templateVersionId: version.id,
      locale: version.locale,
      data: templateData(contact),
      tags: ['campaign'],
      metadata: { campaignId: campaign.id },
      ...(contact.projectId ? { projectId: contact.projectId } : {}),
    }));
  }
  const to = contacts[contacts.length - 1].id;
  if (sends.length === 0) {
    await advance(sequelize, run, { from, to, accepted: 0, rejected: refused.length });
    return 'more';
  }
  try {
    // The campaign's one call into the send pipeline: this chunk's sends commit with its position.
    await acceptSends(run.deps, senderOf(campaign), sends, {
      shape: 'batch',
      rejected: refused,
      inTransaction: async (transaction, body) => {
        const result = body as BatchAccepted;
        if (!(await advance(sequelize, run, { from, to, accepted: result.accepted.length, rejected: result.rejected.length }, transaction))) throw new PositionMoved();
      },
    });
  } catch (error) {
    // Read again: a cancel ends the job, another run's progress is continued.
    if (error instanceof PositionMoved) return 'more';
    throw error;
  }
  return 'more';
}

/** One chunk of at most `limit` contacts, as a job run would take it (tests stop a send part-way with it). */
export async function expandOneChunk(deps: SendDeps, tenantId: string, campaignId: string, limit: number): Promise<Step> {
  return expandChunk({ deps, tenantId, campaignId, versions: new Map() }, limit);
}

/** Sends the tenant may still make this cycle before the hard stop (110 %). */
async function quotaAllowance(sequelize: Sequelize, tenantId: string): Promise<number> {
  const quota = await quotaStatus(sequelize, tenantId);
  return Math.floor(quota.limit * QUOTA_HARD_STOP_RATIO) - quota.used;
}

/** The pipeline refused the chunk: back to DRAFT/SCHEDULED when nothing was accepted, else retry later. */
async function recordRefusal(run: Run, job: JobRow, error: ApiError): Promise<JobOutcome> {
  const [row] = await run.deps.sequelize.query<{ status: string }>(
    `UPDATE campaigns SET last_error = :message, updated_at = now(),
            status = CASE WHEN accepted_count = 0 THEN (CASE WHEN send_at IS NULL THEN 'DRAFT' ELSE 'SCHEDULED' END) ELSE status END,
            expansion_cursor = CASE WHEN accepted_count = 0 THEN NULL ELSE expansion_cursor END
      WHERE id = :id AND tenant_id = :tenantId AND status = 'SENDING' RETURNING status`,
    { replacements: { message: error.message, id: run.campaignId, tenantId: run.tenantId }, type: QueryTypes.SELECT },
  );
  if (!row || row.status !== 'SENDING') return { kind: 'done' };
  return { kind: 'retry', delayMs: Math.min(RETRY_BASE_MS * 2 ** job.attempts, RETRY_MAX_MS), error: error.message };
}

export async function handleCampaignJob(job: JobRow, ctx: WorkerContext): Promise<JobOutcome> {
  const run: Run = {
    deps: { sequelize: ctx.sequelize, sql: ctx.sql, config: ctx.config, secrets: ctx.secrets },
    tenantId: String(job.payload.tenantId),
    campaignId: String(job.payload.campaignId),
    versions: new Map(),
  };
  let limit = CONTACTS_PER_CHUNK;
  for (;;) {
    let step: Step;
    try {
      step = await expandChunk(run, limit);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.code === 'QUOTA_EXCEEDED') {
        const allowance = await quotaAllowance(ctx.sequelize, run.tenantId);
        if (allowance > 0 && allowance < limit) {
          limit = allowance;
          continue;
        }
      }
      return recordRefusal(run, job, error);
    }
    if (step !== 'more') return { kind: 'done' };
    limit = CONTACTS_PER_CHUNK;
  }
}
