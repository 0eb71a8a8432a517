// The one entry of every send (send, batch, resend, scheduled, send-template, campaigns):
//
//   acceptSends(deps: SendDeps, ctx: TenantContext, requests: NormalizedSend[], options: AcceptOptions)
//     → Promise<SendAnswer>  ({ statusCode, body, quota, replayed })
//
// Callers validate first (normalizeSend in ./validate.ts; templates render nothing here: they pass
// templateVersionId + data and the worker renders). acceptSends then runs the pipeline of
// ARCHITECTURE.md: idempotency → suppression → quota → sending pause → one transaction holding
// the logs, their jobs, the quota count and the idempotency answer → 202 (or, with sync, delivery
// in the request). Throws ApiError subclasses for refusals; quota headers travel on the answer.
import { createHash, randomUUID } from 'node:crypto';
import type { Sequelize, Transaction } from 'sequelize';
import { QueryTypes } from 'sequelize';
import type { Config } from '../../config.ts';
import type { Secrets } from '../../secrets.ts';
import type { TenantContext } from '../../plugins/access.ts';
import { ApiError, ConflictError, ForbiddenError, UnprocessableError } from '../../errors.ts';
import { removeJob } from '../../queue/enqueue.ts';
import { isVerifiedSenderDomain } from '../domains/service.ts';
import { suppressedAmong } from '../suppressions/service.ts';
import { projectExists } from '../projects/service.ts';
import { quotaCap, quotaHeaders, quotaStatus, tenantSendingState, wouldExceedQuota, type QuotaStatus } from '../quota/service.ts';
import { loadTemplateRenderer } from '../../mail/template-hook.ts';
import { insertAcceptedSends, type AcceptedSend } from './insert-accepted.ts';
import { bareAddress, recipientsOf, type NormalizedSend } from './validate.ts';
import type { BatchAccepted, SendAccepted } from '../../../shared/schemas/emails.ts';

export interface SendDeps {
  sequelize: Sequelize;
  config: Config;
  secrets: Secrets;
}

export interface AcceptOptions {
  /** 'single' answers { id, status, messageId }; 'batch' answers { accepted, rejected }. */
  shape: 'single' | 'batch';
  /** Deliver in the request (single only) and answer SENT or FAILED. */
  sync?: boolean;
  idempotencyKey?: string | null;
  /** What the idempotency key is bound to (the request body); defaults to the requests. */
  idempotencyFingerprint?: unknown;
  /** Batch entries already refused by the caller (bad address, unknown template …). */
  rejected?: { to: string; reason: string }[];
  /**
   * Runs inside the transaction that writes the sends, after them, with the answer: a caller's own
   * rows commit (or roll back, when it throws) together with the sends. A campaign chunk writes its
   * position this way. Only the writes are in that transaction (every read comes before it), which
   * the embedded PGlite needs: it serves one transaction at a time. Not for sync sends.
   */
  inTransaction?: (transaction: Transaction, body: SendAccepted | BatchAccepted) => Promise<void>;
}

export interface SendAnswer {
  statusCode: number;
  body: SendAccepted | BatchAccepted;
  quota: QuotaStatus;
  /** True when the answer is the stored first answer of an idempotency key. */
  replayed: boolean;
}

export const IDEMPOTENCY_TTL_HOURS = 24;
export const SEND_MAX_ATTEMPTS = 8;
/** A sync send also gets a job, due after this delay, so a crash mid-request still delivers. */
const SYNC_SAFETY_DELAY_MS = 60_000;
const IDEMPOTENCY_WAIT_MS = 10_000;

export function sendJobKey(emailId: string): string {
  return `email:${emailId}`;
}

function fingerprintHash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value ?? null)).digest('hex');
}

interface StoredAnswer {
  body_hash: string;
  status_code: number | null;
  response: SendAccepted | BatchAccepted | null;
}

async function storedAnswer(sequelize: Sequelize, tenantId: string, key: string): Promise<StoredAnswer | null> {
  const [row] = await sequelize.query<StoredAnswer>(
    `SELECT body_hash, status_code, response FROM idempotency_keys
      WHERE tenant_id = :tenantId AND key = :key AND created_at > now() - make_interval(hours => :ttl)`,
    { replacements: { tenantId, key, ttl: IDEMPOTENCY_TTL_HOURS }, type: QueryTypes.SELECT },
  );
  return row ?? null;
}

/** The first answer for this key, 409 for another body; null when the key is new. */
async function replayIfKnown(sequelize: Sequelize, tenantId: string, key: string, hash: string): Promise<{ statusCode: number; body: SendAccepted | BatchAccepted } | null> {
  const deadline = Date.now() + IDEMPOTENCY_WAIT_MS;
  for (;;) {
    const row = await storedAnswer(sequelize, tenantId, key);
    if (!row) return null;
    if (row.body_hash !== hash) {
      throw new ConflictError('This Idempotency-Key was already used with a different request body; use a new key for a new send.', 'IDEMPOTENCY_KEY_REUSED');
    }
    if (row.response && row.status_code) return { statusCode: row.status_code, body: row.response };
    // The first request (a sync send) is still delivering: wait for its answer.
    if (Date.now() > deadline) throw new ConflictError('A request with this Idempotency-Key is still being processed; retry shortly.', 'IDEMPOTENCY_KEY_IN_USE');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function messageIdFor(emailId: string, fromAddress: string): string {
  const domain = fromAddress.split('@')[1] ?? 'localhost';
  return `<${emailId}@${domain.replace(/[^A-Za-z0-9.-]/g, '') || 'localhost'}>`;
}

type Prepared = AcceptedSend;

/** Template rendering, projects and verified sender domains of the sends (campaign chunks check theirs once per run). */
export async function checkReferences(deps: SendDeps, ctx: TenantContext, requests: NormalizedSend[]): Promise<void> {
  if (requests.some((r) => r.templateVersionId) && !(await loadTemplateRenderer())) {
    throw new UnprocessableError('Template rendering is not available yet: send htmlBody or textBody instead of templateVersionId.', 'TEMPLATE_RENDERING_UNAVAILABLE');
  }
  for (const projectId of new Set(requests.map((r) => r.projectId).filter((p): p is string => p !== null))) {
    if (!(await projectExists(ctx.tenantId, projectId))) throw new UnprocessableError(`projectId ${projectId} names no project of this tenant.`, 'UNKNOWN_PROJECT');
  }
  // Verified domains are required only when mail really leaves: not for test keys, not in capture mode.
  const leaves = !ctx.testMode && (deps.config.smtpUrl !== null || requests.some((r) => r.projectId !== null));
  if (!leaves) return;
  for (const domain of new Set(requests.map((r) => r.fromAddress.split('@')[1]))) {
    if (!(await isVerifiedSenderDomain(deps.sequelize, ctx.tenantId, domain))) {
      throw new ForbiddenError(`${domain} is not a verified sending domain of this tenant: add it with POST /domains and verify its DNS records, or send from a verified domain.`, 'DOMAIN_NOT_VERIFIED');
    }
  }
}

export function quotaError(quota: QuotaStatus): ApiError {
  const retryAfter = Math.max(1, Math.ceil((quota.nextCycleAt.getTime() - Date.now()) / 1000));
  return new ApiError(429, 'QUOTA_EXCEEDED', `The monthly quota of ${quota.limit} emails is used beyond the 110 % grace (${quota.used} sent); sending resumes on ${quota.nextCycleAt.toISOString()} or after an upgrade.`, undefined, {
    ...quotaHeaders(quota),
    'retry-after': String(retryAfter),
  });
}

/** Sending is paused for the tenant (bounces, complaints, or an operator). */
export function sendingPausedError(pausedAt: Date, reason: string | null): ApiError {
  return new ForbiddenError(`Sending is paused for this tenant since ${pausedAt.toISOString()} (${reason ?? 'too many bounces or complaints'}); clean the list, then an owner can lift the pause with POST /tenants/{id}/resume-sending.`, 'SENDING_PAUSED');
}

export async function acceptSends(deps: SendDeps, ctx: TenantContext, requests: NormalizedSend[], options: AcceptOptions): Promise<SendAnswer> {
  const { sequelize } = deps;
  const key = options.idempotencyKey ?? null;
  const hash = fingerprintHash(options.idempotencyFingerprint ?? requests);
  if (key) {
    const known = await replayIfKnown(sequelize, ctx.tenantId, key, hash);
    if (known) return { ...known, quota: await quotaStatus(sequelize, ctx.tenantId), replayed: true };
  }
  // One read: the pause, the tracking defaults and the quota (read again here, not cached, so a
  // pause or a quota reached takes effect on the very next send).
  const tenant = await tenantSendingState(sequelize, ctx.tenantId);
  if (!tenant) throw new ForbiddenError('This tenant no longer exists.', 'TENANT_GONE');
  await checkReferences(deps, ctx, requests);

  // Suppression: suppressed recipients are dropped and listed; a message left with no `to` is refused.
  const suppressed = await suppressedAmong(sequelize, ctx.tenantId, requests.flatMap(recipientsOf));
  const rejected = [...(options.rejected ?? [])];
  const suppressedOfSingle: string[] = [];
  const kept: NormalizedSend[] = [];
  for (const request of requests) {
    const keep = (list: string[]) => list.filter((a) => !suppressed.has(bareAddress(a)));
    const next = { ...request, to: keep(request.to), cc: keep(request.cc), bcc: keep(request.bcc) };
    const dropped = recipientsOf(request).filter((a) => suppressed.has(a));
    if (options.shape === 'batch' && dropped.length) rejected.push({ to: request.to.join(', '), reason: 'suppressed' });
    else if (next.to.length === 0) suppressedOfSingle.push(...dropped);
    else {
      suppressedOfSingle.push(...dropped);
      kept.push(next);
    }
  }
  if (options.shape === 'single' && kept.length === 0) {
    throw new ApiError(422, 'RECIPIENT_SUPPRESSED', 'Every recipient of this message is on the suppression list; nothing was sent.', suppressedOfSingle.map((address) => ({ field: 'to', message: `${address} is suppressed` })));
  }

  const quota = tenant.quota;
  const counted = ctx.testMode ? 0 : kept.length;
  if (counted > 0 && wouldExceedQuota(quota, counted)) throw quotaError(quota);
  if (tenant.sendingPausedAt && kept.length > 0) {
    throw sendingPausedError(tenant.sendingPausedAt, tenant.sendingPausedReason);
  }

  const prepared: Prepared[] = kept.map((request) => {
    const id = randomUUID();
    return { request, id, messageId: messageIdFor(id, request.fromAddress) };
  });
  const sync = options.sync === true && options.shape === 'single' && !options.inTransaction;
  const body: SendAccepted | BatchAccepted = options.shape === 'single'
    ? { id: prepared[0].id, status: 'QUEUED', messageId: prepared[0].messageId, ...(suppressedOfSingle.length ? { suppressed: suppressedOfSingle } : {}) }
    : { accepted: prepared.map((p) => ({ to: p.request.to.join(', '), id: p.id, messageId: p.messageId })), rejected };

  const insertOptions = {
    tenantId: ctx.tenantId,
    apiKeyId: ctx.apiKeyId,
    testMode: ctx.testMode,
    trackOpens: tenant.trackOpens,
    trackClicks: tenant.trackClicks,
    counted,
    quotaCap: quotaCap(quota),
    cycleStart: quota.cycleStart,
    runAt: sync ? new Date(Date.now() + SYNC_SAFETY_DELAY_MS) : undefined,
    maxAttempts: SEND_MAX_ATTEMPTS,
    jobKeyPrefix: sendJobKey(''),
  };
  // Without a key the sends are one statement, which commits on its own: no BEGIN/COMMIT.
  let raced = false;
  const hook = options.inTransaction;
  // The reservation in the insert is the exact check (the one above read usage before it): a refusal
  // there wrote nothing, and inside a transaction it rolls back the idempotency row with the rest.
  const refused = () => quotaError({ ...quota, used: Math.max(quota.used, quotaCap(quota) - counted + 1) });
  if (!key && !hook) {
    if (!(await insertAcceptedSends(sequelize, prepared, insertOptions))) throw refused();
  } else if (!key) {
    await sequelize.transaction(async (tx) => {
      if (!(await insertAcceptedSends(sequelize, prepared, insertOptions, tx))) throw refused();
      await hook!(tx, body);
    });
  } else raced = await sequelize.transaction(async (tx) => {
    const inserted = await sequelize.query(
      `INSERT INTO idempotency_keys (tenant_id, key, body_hash, status_code, response)
       VALUES (:tenantId, :key, :hash, :status, CAST(:response AS jsonb))
       ON CONFLICT (tenant_id, key) DO UPDATE SET body_hash = EXCLUDED.body_hash, status_code = EXCLUDED.status_code,
         response = EXCLUDED.response, created_at = now()
         WHERE idempotency_keys.created_at <= now() - make_interval(hours => :ttl)
       RETURNING key`,
      { replacements: { tenantId: ctx.tenantId, key, hash, status: sync ? null : 202, response: sync ? null : JSON.stringify(body), ttl: IDEMPOTENCY_TTL_HOURS }, type: QueryTypes.SELECT, transaction: tx },
    );
    // Another request with this key committed first (we waited on its row): answer as it did.
    if (inserted.length === 0) return true;
    if (!(await insertAcceptedSends(sequelize, prepared, insertOptions, tx))) throw refused();
    await hook?.(tx, body);
    return false;
  });
  if (raced) {
    const known = await replayIfKnown(sequelize, ctx.tenantId, key!, hash);
    if (!known) throw new ConflictError('A request with this Idempotency-Key was being processed; retry shortly.', 'IDEMPOTENCY_KEY_IN_USE');
    return { ...known, quota: await quotaStatus(sequelize, ctx.tenantId), replayed: true };
  }
  const after = { ...quota, used: quota.used + counted };

  if (!sync) return { statusCode: 202, body, quota: after, replayed: false };
  const { deliverEmailLog } = await import('./send-job.ts');
  const outcome = await deliverEmailLog(deps, prepared[0].id, { attemptsSoFar: 0, maxAttempts: 1 });
  await removeJob(sequelize, 'send', sendJobKey(prepared[0].id));
  const syncBody: SendAccepted = {
    ...(body as SendAccepted),
    status: outcome.status === 'SENT' ? 'SENT' : 'FAILED',
    ...(outcome.error ? { error: outcome.error } : {}),
  };
  const statusCode = outcome.status === 'SENT' ? 200 : 202;
  if (key) {
    await sequelize.query(
      `UPDATE idempotency_keys SET status_code = :statusCode, response = CAST(:response AS jsonb) WHERE tenant_id = :tenantId AND key = :key`,
      { replacements: { statusCode, response: JSON.stringify(syncBody), tenantId: ctx.tenantId, key } },
    );
  }
  return { statusCode, body: syncBody, quota: after, replayed: false };
}

/** Deletes idempotency answers older than 24 hours (maintenance). */
export async function pruneIdempotencyKeys(sequelize: Sequelize): Promise<void> {
  await sequelize.query(`DELETE FROM idempotency_keys WHERE created_at < now() - make_interval(hours => :ttl)`, { replacements: { ttl: IDEMPOTENCY_TTL_HOURS } });
}
