// The campaign expansion job (queue 'campaign', handler registered in daemon/jobs/handlers.ts).
//
// The audience is walked in id order, CONTACTS_PER_CHUNK contacts at a time. What every recipient
// shares (sender, template versions, domain and renderer checks) is settled once per job run; then
// each chunk is one statement that reads the next contacts after the campaign's position and writes
// their sends, the quota and the new position (with the counters), in ONE transaction (chunk.ts).
// The transaction reads the position under a lock on the campaign row and writes only while the
// campaign is SENDING, else nothing of the chunk is written. A worker killed at any point therefore
// leaves either the whole chunk (sends and position) or none of it; the queue's lease reclaim runs
// the job again and it resumes after the last committed chunk: no contact is sent twice by the
// expansion and none is skipped. Two runs of the same job (a lease lost by a live worker) take the
// lock in turn, the second from the position the first left; a cancel that commits first makes the
// chunk in flight write nothing.
//
// Refusals of the pipeline (quota, sending pause, unverified domain …): with nothing accepted yet
// the campaign returns to DRAFT (SCHEDULED if it has a sendAt) with the sentence in lastError;
// part-way it stays SENDING with lastError and the job is retried with backoff (up to an hour),
// so it continues once the quota cycle resets or the pause is lifted, or it is cancelled. The
// quota is exact per recipient: a chunk that would cross the hard stop is cut to what still fits.
// Suppressed contacts, and contacts whose locale has no published version, are counted as rejected.
import { QueryTypes, type Sequelize } from 'sequelize';
import { ApiError, ForbiddenError, UnprocessableError } from '../../errors.ts';
import type { TenantContext } from '../../context.ts';
import { wakeQueue } from '../../queue/enqueue.ts';
import type { JobOutcome, JobRow } from '../../queue/types.ts';
import type { WorkerContext } from '../../mail/worker-context.ts';
import {
  checkReferences,
  messageIdFor,
  quotaError,
  SEND_MAX_ATTEMPTS,
  sendJobKey,
  sendingPausedError,
  workerSendDeps,
  type SendDeps,
} from '../emails/service.ts';
import { normalizeSend, type NormalizedSend } from '../emails/validate.ts';
import { isVerifiedSenderDomain } from '../domains/service.ts';
import { resolvePublishedVersion } from '../templates/render.ts';
import { QUOTA_HARD_STOP_RATIO, quotaCap, quotaStatus, tenantSendingState } from '../quota/service.ts';
import { publishedLocales, templateSlug, type CampaignRow } from './model.ts';
import { modelsOf } from '../models.ts';
import { writeChunk, type ChunkPlan, type ChunkVersion } from './chunk.ts';

export const CONTACTS_PER_CHUNK = 2000;
const RETRY_BASE_MS = 60_000;
const RETRY_MAX_MS = 60 * 60_000;

type Step = 'more' | 'finished' | 'stopped';

export type ExpandDeps = SendDeps;

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
  deps: ExpandDeps;
  tenantId: string;
  campaignId: string;
  /** Settled at the first chunk of the job run. */
  plan: ChunkPlan | null;
  /** A send as the pipeline would check it (the sender, a template, the project), for checkReferences. */
  probe: NormalizedSend | null;
  sender: TenantContext | null;
}

/** A lower-cased published locale → the version a contact with that locale gets (resolvePublishedVersion). */
async function publishedVersions(sequelize: Sequelize, tenantId: string, templateId: string, slug: string) {
  const versions: Record<string, ChunkVersion> = {};
  for (const locale of await publishedLocales(sequelize, tenantId, templateId)) {
    const version = await resolvePublishedVersion(sequelize, tenantId, slug, locale);
    if (version) versions[locale] = { id: version.id, locale: version.locale };
  }
  const fallback = await resolvePublishedVersion(sequelize, tenantId, slug, null);
  return { versions, defaultVersion: fallback ? { id: fallback.id, locale: fallback.locale } : null };
}

/** What every recipient shares, checked as acceptSends checks a send (sender, renderer, domain). */
async function planRun(run: Run, campaign: CampaignRow): Promise<ChunkPlan> {
  const { sequelize } = run.deps.db;
  const slug = await templateSlug(sequelize, run.tenantId, campaign.templateId);
  if (!slug) throw new UnprocessableError("The campaign's template no longer exists.", 'TEMPLATE_NOT_FOUND');
  const { versions, defaultVersion } = await publishedVersions(sequelize, run.tenantId, campaign.templateId, slug);
  const probe = normalizeSend({
    from: campaign.fromAddress ?? '',
    to: 'recipient@example.com',
    templateVersionId: defaultVersion?.id ?? 'none',
  });
  await checkReferences(run.deps, senderOf(campaign), { requests: [probe], fresh: true });
  run.probe = probe;
  return {
    tenantId: run.tenantId,
    campaignId: run.campaignId,
    audience: campaign.audience ?? {},
    apiKeyId: campaign.apiKeyId ?? null,
    testMode: campaign.testMode,
    domainVerified:
      campaign.testMode || (await isVerifiedSenderDomain(run.deps, run.tenantId, probe.fromAddress.split('@')[1])),
    from: probe.from,
    // messageIdFor gives `<id@domain>`: the chunk statement puts each log's id before the rest.
    messageIdSuffix: messageIdFor('', probe.fromAddress).slice(1),
    versions,
    defaultVersion,
    maxAttempts: SEND_MAX_ATTEMPTS,
    jobKeyPrefix: sendJobKey(''),
  };
}

/** One chunk (see the header): reads first, then one transaction writes the chunk or nothing. */
async function expandChunk(run: Run, limit: number): Promise<Step> {
  const { sequelize } = run.deps.db;
  if (!run.plan) {
    const campaign = await modelsOf(sequelize).CampaignRow.findOne({
      where: { id: run.campaignId, tenantId: run.tenantId },
    });
    if (!campaign || campaign.status !== 'SENDING') return 'stopped';
    run.plan = await planRun(run, campaign);
    run.sender = senderOf(campaign);
  }
  const plan = run.plan;
  // Read for every chunk, so a pause or a new quota cycle takes effect at the next one.
  const tenant = await tenantSendingState(sequelize, run.tenantId);
  if (!tenant) throw new ForbiddenError('This tenant no longer exists.', 'TENANT_GONE');
  if (tenant.sendingPausedAt) throw sendingPausedError(tenant.sendingPausedAt, tenant.sendingPausedReason);
  const cap = quotaCap(tenant.quota);
  const result = await writeChunk(
    run.deps.db.sql,
    plan,
    {
      cycleStart: tenant.quota.cycleStart,
      cap,
      trackOpens: tenant.trackOpens ?? false,
      trackClicks: tenant.trackClicks ?? false,
    },
    limit,
  );
  switch (result.kind) {
    case 'stopped':
      return 'stopped';
    case 'over-quota':
      throw quotaError({ ...tenant.quota, used: Math.max(tenant.quota.used, cap - result.wanted + 1) });
    case 'blocked':
      // The pipeline's own refusal for a send with this project (unverified domain, unknown project);
      // none means the domain was verified meanwhile.
      await checkReferences(run.deps, run.sender!, {
        requests: [{ ...run.probe!, projectId: result.projectId }],
        fresh: true,
      });
      plan.domainVerified = true;
      return 'more';
    case 'written':
      if (result.accepted > 0) wakeQueue(sequelize, 'send');
      return result.read === 0 ? 'finished' : 'more';
  }
}

/** One chunk of at most `limit` contacts, as a job run would take it (tests stop a send part-way with it). */
export async function expandOneChunk(
  deps: ExpandDeps,
  tenantId: string,
  campaignId: string,
  limit: number,
): Promise<Step> {
  return expandChunk({ deps, tenantId, campaignId, plan: null, probe: null, sender: null }, limit);
}

/** Sends the tenant may still make this cycle before the hard stop (110 %). */
async function quotaAllowance(sequelize: Sequelize, tenantId: string): Promise<number> {
  const quota = await quotaStatus(sequelize, tenantId);
  return Math.floor(quota.limit * QUOTA_HARD_STOP_RATIO) - quota.used;
}

/** The pipeline refused the chunk: back to DRAFT/SCHEDULED when nothing was accepted, else retry later. */
async function recordRefusal(run: Run, job: JobRow, error: ApiError): Promise<JobOutcome> {
  const [row] = await run.deps.db.sequelize.query<{ status: string }>(
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
    deps: workerSendDeps(ctx),
    tenantId: String(job.payload.tenantId),
    campaignId: String(job.payload.campaignId),
    plan: null,
    probe: null,
    sender: null,
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
