// The one entry of every send (send, batch, resend, scheduled, send-template, campaigns, SMTP):
//
//   acceptSends(deps: SendDeps, ctx: TenantContext, { sends, ...options }: AcceptInput)
//     → Promise<SendAnswer>  ({ body, accepted, rejected, suppressed, sync, replayed, quota })
//
// It knows no HTTP: the routes turn the answer into a status and headers (replyWithSend in
// ./reply.ts). Callers validate first (normalizeSend in ./validate.ts; templates render nothing
// here: they pass templateVersionId + data and the worker renders). Refusals are thrown as ApiError
// subclasses, quota ones carrying the X-Quota-* headers.
//
// The common case is one round trip: the tenant's state comes from the app's cache
// (tenants/state-cache.ts), and the one accept statement (./insert-accepted.ts) re-checks that
// state, the suppression list, the sender domain and the key, reserves the quota exactly and writes
// the logs, their timeline rows and their jobs; concurrent sends of a tenant share that statement
// (./accept-groups.ts). When the statement finds the state moved (or a recipient suppressed), the
// send is decided again on a fresh read, with the precise refusal the send pipeline gives
// (docs/accept-path.md): idempotency → suppression → quota → sending pause → write → 202 (or, with sync, delivery
// in the request). A refusal decided from the cache is also confirmed on a fresh read first.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { Transaction } from 'sequelize';
import type { Config } from '../../config.ts';
import type { Secrets } from '../../secrets.ts';
import type { Database } from '../../db/index.ts';
import type { WorkerContext } from '../../mail/worker-context.ts';
import type { TenantContext } from '../../context.ts';
import { ApiError, ConflictError, ForbiddenError, UnauthorizedError, UnprocessableError } from '../../errors.ts';
import { removeJob, wakeQueueWithSql } from '../../queue/enqueue.ts';
import { clientOf } from '../../db/sql.ts';
import { wakeMtaLoops } from '../../mta/spooler.ts';
import { isVerifiedSenderDomain } from '../domains/service.ts';
import { domainAndParents, senderDomainOf } from '../../mail/domain-names.ts';
import { suppressedAmong } from '../suppressions/sql/suppressions.ts';
import { projectExists, projectSmtpSettings } from '../projects/service.ts';
import { enforceSenderRules } from '../domains/sender-rules.ts';
import { quotaCap, quotaHeaders, quotaOfRow, wouldExceedQuota, type QuotaStatus } from '../quota/service.ts';
import { apiKeyIsLive, loadTenantState, type TenantState, type TenantStateCache } from '../tenants/state-cache.ts';
import {
  insertAcceptedSends,
  type AcceptedSend,
  type InsertAcceptedOptions,
  type InsertOutcome,
  type SpooledAtAccept,
} from './insert-accepted.ts';
import type { AcceptGroups } from './accept-groups.ts';
import type { MailResources } from '../../mail/resources.ts';
import type { MetricsReporter } from '../metrics/reporter.ts';
import {
  claimKey,
  completeKey,
  fingerprintHash,
  replayIfKnown,
  type AnswerBody,
  type StoredAnswer,
} from './idempotency.ts';
import { normalizedBareAddress } from '../../mail/mailboxes.ts';
import { recipientsOf, type NormalizedSend } from './validate.ts';
import type { BatchAccepted, SendAccepted } from '../../../shared/schemas/emails.ts';
import { awaitSyncVerdict, type SyncAnswer } from './sync-verdict.ts';

/**
 * The send pipeline's deps: the routes pass their ModuleDeps, the SMTP server and workers their own.
 * The mail resources check senders (DKIM cache) and deliver a sync send (relay pools, sandbox).
 */
export interface SendDeps extends MailResources {
  /** `sql` (plain `pg`) for the accept statement and the idempotency keys. */
  db: Pick<Database, 'sequelize' | 'sql'>;
  config: Config;
  secrets: Secrets;
  /** The API's cache of tenant state (absent in worker threads: every send reads the state). */
  tenantState?: TenantStateCache;
  /** Group commit of concurrent plain sends (absent: each send is its own statement). */
  acceptGroups?: AcceptGroups;
  /** This node's /metrics, where a sync send's outcome is counted (absent in worker threads: no sync sends). */
  metrics?: Pick<MetricsReporter, 'count'>;
}

/** A worker thread's send deps: its own mail resources, no tenant-state cache, no group commit. */
export function workerSendDeps(ctx: WorkerContext): SendDeps {
  return {
    db: { sequelize: ctx.sequelize, sql: ctx.sql },
    config: ctx.config,
    secrets: ctx.secrets,
    dkimSigning: ctx.dkimSigning,
    mailTransports: ctx.mailTransports,
    reactEmailSandbox: ctx.reactEmailSandbox,
    senderRules: ctx.senderRules,
  };
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
  /**
   * The message already built by the client (an SMTP submission): when the send may leave as it came
   * (spoolsAtAccept), this builds and signs it once its id and Message-ID are fixed, and the accept
   * statement spools it in its own commit, with no send job (docs/smtp.md, "Spooled at accept").
   */
  spoolAtAccept?: (send: AcceptedSend) => Promise<SpooledAtAccept>;
}

/**
 * Whether a send's message may leave as its client built it, spooled by its accept: only where nothing
 * of the message is the service's to compose. Direct delivery (a relay gets the composed message), a
 * live key (a test key's mail is captured), no project (a project may have its own relay), no template,
 * not a campaign's, and neither the send nor the tenant asking for open or click tracking (which rewrite
 * the HTML). Anything else takes the send job, which composes the message from the log. The accept
 * statement re-checks the tenant's tracking (INSERT_ACCEPTED_SPOOLED's guard).
 */
export function spoolsAtAccept(
  config: Pick<Config, 'delivery'>,
  ctx: Pick<TenantContext, 'testMode'>,
  row: Pick<TenantState['row'], 'track_opens' | 'track_clicks'>,
  request: NormalizedSend,
): boolean {
  return (
    config.delivery === 'direct' &&
    !ctx.testMode &&
    request.projectId === null &&
    request.templateVersionId === null &&
    typeof request.metadata.campaignId !== 'string' &&
    request.trackOpens !== true &&
    request.trackClicks !== true &&
    row.track_opens !== true &&
    row.track_clicks !== true
  );
}

export interface SendAnswer {
  /** The answer body in the requested shape (the stored one for a replay). */
  body: SendAccepted | BatchAccepted;
  /** The sends written, in request order (empty for a replay). */
  accepted: { id: string; messageId: string; to: string[] }[];
  /** Batch entries refused (by the caller, or suppressed). */
  rejected: { to: string; reason: string }[];
  /** Recipients of a single send dropped because they are suppressed. */
  suppressed: string[];
  /** The delivery made in the request (sync), or null when the sends were queued. */
  sync: SyncAnswer | null;
  /** True when the answer is the stored first answer of an idempotency key. */
  replayed: boolean;
  /** The tenant's quota after this call. */
  quota: QuotaStatus;
}

export const SEND_MAX_ATTEMPTS = 8;
/** A sync send also gets a job, due after this delay, so a crash mid-request still delivers. */
const SYNC_SAFETY_DELAY_MS = 60_000;
/** Fresh reads after the statement found the state moved, before giving up with a 503. */
const MAX_DECISIONS = 3;

export function sendJobKey(emailId: string): string {
  return `email:${emailId}`;
}

export function messageIdFor(emailId: string, fromAddress: string): string {
  const domain = fromAddress.split('@')[1] ?? 'localhost';
  return `<${emailId}@${domain.replace(/[^A-Za-z0-9.-]/g, '') || 'localhost'}>`;
}

/**
 * Projects known, sender domains verified. Answers the names the accept
 * statement checks for a verified domain (the one sender domain and its parents), or null when it
 * need not check: mail that does not leave (test keys, capture mode), or domains checked here.
 * From cached state (not `fresh`) the one sender domain is left to the statement, a read less.
 */
export async function checkReferences(
  deps: SendDeps,
  ctx: TenantContext,
  input: { requests: NormalizedSend[]; fresh: boolean },
): Promise<string[] | null> {
  const { requests, fresh } = input;
  for (const projectId of new Set(requests.map((r) => r.projectId).filter((p): p is string => p !== null))) {
    if (!(await projectExists(deps.db.sequelize, ctx.tenantId, projectId)))
      throw new UnprocessableError(`projectId ${projectId} names no project of this tenant.`, 'UNKNOWN_PROJECT');
  }
  // Verified domains are required only when mail really leaves: not for test keys, not in capture mode.
  const leaves =
    !ctx.testMode &&
    (deps.config.delivery === 'direct' || deps.config.smtpUrl !== null || requests.some((r) => r.projectId !== null));
  if (!leaves) return null;
  const domains = [...new Set(requests.map((r) => r.fromAddress.split('@')[1]))];
  for (const domain of await directlyDeliveredSenderDomains(deps, ctx, requests))
    await enforceSenderRules(deps, ctx.tenantId, domain);
  if (!fresh && domains.length === 1) return domainAndParents(senderDomainOf(domains[0]) ?? '');
  for (const domain of domains) {
    if (!(await isVerifiedSenderDomain(deps, ctx.tenantId, domain))) {
      throw new ForbiddenError(
        `${domain} is not a verified sending domain of this tenant: add it with POST /domains and verify its DNS records, or send from a verified domain.`,
        'DOMAIN_NOT_VERIFIED',
      );
    }
  }
  return domains.length === 1 ? domainAndParents(senderDomainOf(domains[0]) ?? '') : null;
}

/**
 * The sender domains of the requests that direct delivery will carry (DELIVERY=direct, and no project
 * relay of their own). The providers' sender rules are enforced only there: through a relay, the relay
 * is the sender the providers judge, with its own rules (SES, Postmark… verify the domain and may sign
 * it themselves, which this daemon cannot see), and the domain diagnosis reports the rules either way.
 */
async function directlyDeliveredSenderDomains(
  deps: SendDeps,
  ctx: TenantContext,
  requests: NormalizedSend[],
): Promise<string[]> {
  if (deps.config.delivery !== 'direct') return [];
  const domains = new Set<string>();
  const relayed = new Map<string, boolean>();
  for (const request of requests) {
    const projectId = request.projectId;
    if (projectId !== null && !relayed.has(projectId))
      relayed.set(
        projectId,
        (await projectSmtpSettings(deps.db.sequelize, ctx.tenantId, projectId, deps.secrets)) !== null,
      );
    if (projectId === null || !relayed.get(projectId)) domains.add(request.fromAddress.split('@')[1]);
  }
  return [...domains];
}

export function quotaError(quota: QuotaStatus): ApiError {
  const retryAfter = Math.max(1, Math.ceil((quota.nextCycleAt.getTime() - Date.now()) / 1000));
  return new ApiError(
    429,
    'QUOTA_EXCEEDED',
    `The monthly quota of ${quota.limit} emails is used beyond the 110 % grace (${quota.used} sent); sending resumes on ${quota.nextCycleAt.toISOString()} or after an upgrade.`,
    undefined,
    {
      ...quotaHeaders(quota),
      'retry-after': String(retryAfter),
    },
  );
}

/** Sending is paused for the tenant (bounces, complaints, or an operator). */
export function sendingPausedError(pausedAt: Date, reason: string | null): ApiError {
  return new ForbiddenError(
    `Sending is paused for this tenant since ${pausedAt.toISOString()} (${reason ?? 'too many bounces or complaints'}); clean the list, then an owner can lift the pause with POST /tenants/{id}/resume-sending.`,
    'SENDING_PAUSED',
  );
}

/** The statement found the tenant's state moved: roll back (when in a transaction) and decide again. */
class StaleState extends Error {}

/** What one decision writes, and the answer it gives when the write goes through. */
interface Decision {
  sends: AcceptedSend[];
  insert: InsertAcceptedOptions;
  quota: QuotaStatus;
  body: SendAccepted | BatchAccepted;
  rejected: { to: string; reason: string }[];
  suppressed: string[];
  sync: boolean;
}

async function readState(deps: SendDeps, tenantId: string, fresh: boolean): Promise<TenantState | null> {
  if (deps.tenantState) return deps.tenantState.tenant(tenantId, { fresh });
  return loadTenantState(deps.db.sql, tenantId);
}

/**
 * Decides a send on `state`: refuses it (throws), or says what to write. With `fresh` state the
 * suppression list and the key are read here; from the cache they are left to the statement.
 *
 * The rules of a send, each decided here and checked again in SQL, in the same snapshot as the write, by
 * INSERT_ACCEPTED (emails/sql/insert-logs.ts: the `guard` CTE, and `reserved` for the quota). A rule
 * changed here is changed there too; when the statement finds one no longer holds, it writes nothing
 * (`fresh: false`) and acceptSends decides again on fresh state (StaleState):
 *   rule                      here (TypeScript)                             there (SQL)
 *   the tenant exists         `!state` → TENANT_GONE                        guard: t.id = $1
 *   key live, tenant not      apiKeyIsLive, row.status (fresh; else         guard: $17 → t.status = 'active' and
 *     blocked (API key sends)   the auth plugin's cache)                      the api_keys row not revoked
 *   projects, sender domain   checkReferences (projectExists,               guard: $14 → a verified domain among
 *     verified, sender rules    enforceSenderRules, isVerifiedSenderDomain)   the sender's names (projects and the
 *                                                                             providers' rules: not re-checked)
 *   no recipient suppressed   suppressedAmong (fresh)                       guard: noneSuppressedSql($15)
 *   quota (110 % grace)       wouldExceedQuota(quotaOfRow(row))             guard: plan, limit, cycle = $11–$13;
 *                                                                             reserved: used + counted ≤ $6
 *   sending not paused        row.sending_paused_at → SENDING_PAUSED        guard: t.sending_paused_at IS NULL
 */
async function decide(
  deps: SendDeps,
  ctx: TenantContext,
  requests: NormalizedSend[],
  options: AcceptOptions,
  state: TenantState | null,
  fresh: boolean,
): Promise<Decision> {
  if (!state) throw new ForbiddenError('This tenant no longer exists.', 'TENANT_GONE');
  const row = state.row;
  // A key's request is held to the key and the tenant's status (the auth plugin checked them from
  // the cache); worker threads send for scheduled sends and campaigns whatever became of the key.
  const checkKey = deps.tenantState !== undefined && ctx.apiKeyId !== null;
  if (fresh && checkKey) {
    if (!(await apiKeyIsLive(deps.db.sql, ctx.apiKeyId!)))
      throw new UnauthorizedError('The API key is invalid or has been revoked.');
    if (row.status === 'blocked')
      throw new ForbiddenError(
        'This tenant has been blocked by the platform administrator; contact support to lift the block.',
        'TENANT_BLOCKED',
      );
  }
  const senderDomains = await checkReferences(deps, ctx, { requests, fresh });

  // Suppression: suppressed recipients are dropped and listed; a message left with no `to` is refused.
  const suppressed = fresh
    ? await suppressedAmong(deps.db.sequelize, ctx.tenantId, requests.flatMap(recipientsOf))
    : new Set<string>();
  const rejected = [...(options.rejected ?? [])];
  const suppressedOfSingle: string[] = [];
  const kept: NormalizedSend[] = suppressed.size === 0 ? requests : [];
  for (const request of suppressed.size === 0 ? [] : requests) {
    const keep = (list: string[]) => list.filter((a) => !suppressed.has(normalizedBareAddress(a)));
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
    throw new ApiError(
      422,
      'RECIPIENT_SUPPRESSED',
      'Every recipient of this message is on the suppression list; nothing was sent.',
      suppressedOfSingle.map((address) => ({ field: 'to', message: `${address} is suppressed` })),
    );
  }

  const quota = quotaOfRow(row);
  const counted = ctx.testMode ? 0 : kept.length;
  if (counted > 0 && wouldExceedQuota(quota, counted)) throw quotaError(quota);
  if (row.sending_paused_at && kept.length > 0) {
    throw sendingPausedError(new Date(row.sending_paused_at), row.sending_paused_reason);
  }

  const sends: AcceptedSend[] = kept.map((request) => {
    const id = randomUUID();
    return { request, id, messageId: messageIdFor(id, request.fromAddress) };
  });
  const sync = options.sync === true && options.shape === 'single' && !options.inTransaction;
  const spoolAtAccept = options.spoolAtAccept;
  const spooled =
    spoolAtAccept !== undefined &&
    options.shape === 'single' &&
    !sync &&
    !options.inTransaction &&
    sends.length === 1 &&
    spoolsAtAccept(deps.config, ctx, row, sends[0].request);
  if (spooled) sends[0].spooled = await spoolAtAccept(sends[0]);
  const body: SendAccepted | BatchAccepted =
    options.shape === 'single'
      ? {
          id: sends[0].id,
          status: 'QUEUED',
          messageId: sends[0].messageId,
          ...(suppressedOfSingle.length ? { suppressed: suppressedOfSingle } : {}),
        }
      : { accepted: sends.map((p) => ({ to: p.request.to.join(', '), id: p.id, messageId: p.messageId })), rejected };
  const insert: InsertAcceptedOptions = {
    tenantId: ctx.tenantId,
    apiKeyId: ctx.apiKeyId,
    testMode: ctx.testMode,
    counted,
    quotaCap: quotaCap(quota),
    cycleStart: quota.cycleStart,
    runAt: sync ? new Date(Date.now() + SYNC_SAFETY_DELAY_MS) : undefined,
    maxAttempts: SEND_MAX_ATTEMPTS,
    jobKeyPrefix: sendJobKey(''),
    expected: {
      plan: row.plan,
      monthlyLimit: row.monthly_limit,
      cycleStartedAt: row.started_at ? new Date(row.started_at) : null,
      senderDomains,
      checkKey,
    },
    spoolExpiryHours: spooled ? deps.config.deliveryExpiryHours : null,
  };
  return { sends, insert, quota, body, rejected, suppressed: suppressedOfSingle, sync };
}

/**
 * Writes a decision: alone or grouped when there is no key and no caller's transaction, else in a
 * transaction with the key row and the caller's rows. Answers the stored answer when another
 * request with the key committed first; throws StaleState or the quota refusal (nothing written).
 */
async function write(
  deps: SendDeps,
  ctx: TenantContext,
  decision: Decision,
  options: AcceptOptions,
  key: string | null,
  hash: string,
): Promise<{ outcome: InsertOutcome } | { raced: true }> {
  const { sends, insert, body, sync } = decision;
  const refused = () =>
    quotaError({ ...decision.quota, used: Math.max(decision.quota.used, insert.quotaCap - insert.counted + 1) });
  const checked = (outcome: InsertOutcome): InsertOutcome => {
    if (!outcome.fresh) throw new StaleState();
    if (outcome.inserted < sends.length) throw refused();
    return outcome;
  };
  const hook = options.inTransaction;
  if (!key && !hook) {
    if (sends.length === 0) return { outcome: { fresh: true, inserted: 0, used: null } };
    return {
      outcome: checked(
        await (deps.acceptGroups
          ? deps.acceptGroups.insert(sends, insert)
          : insertAcceptedSends(deps.db.sql, sends, insert)),
      ),
    };
  }
  const work = async (client: pg.ClientBase, tx?: Transaction) => {
    if (key && !(await claimKey(deps.db.sql, client, ctx.tenantId, key, hash, sync ? null : { statusCode: 202, body })))
      return { raced: true as const };
    const outcome = checked(await insertAcceptedSends(deps.db.sql, sends, insert, client));
    if (hook) await hook(tx!, body);
    return { outcome };
  };
  return hook
    ? deps.db.sequelize.transaction((tx) => work(clientOf(tx), tx))
    : deps.db.sql.transaction((client) => work(client));
}

function replayed(stored: StoredAnswer, quota: QuotaStatus): SendAnswer {
  const body: AnswerBody = stored.body;
  const single = 'id' in body ? body : null;
  return {
    body,
    accepted: [],
    rejected: 'rejected' in body ? body.rejected : [],
    suppressed: single?.suppressed ?? [],
    sync:
      single && single.status !== 'QUEUED'
        ? {
            status: single.status,
            ...(single.error ? { error: single.error } : {}),
            ...(single.deferred ? { deferred: single.deferred } : {}),
            ...(single.waiting ? { waiting: single.waiting } : {}),
          }
        : null,
    replayed: true,
    quota,
  };
}

/** The sends to accept (validated already) and how to accept them. */
export type AcceptInput = AcceptOptions & { sends: NormalizedSend[] };

export async function acceptSends(deps: SendDeps, ctx: TenantContext, input: AcceptInput): Promise<SendAnswer> {
  const { sends: requests, ...options } = input;
  const key = options.idempotencyKey ?? null;
  const hash = key ? fingerprintHash(options.idempotencyFingerprint ?? requests) : '';
  const quotaNow = async () => {
    const state = await readState(deps, ctx.tenantId, false);
    return state
      ? quotaOfRow(state.row)
      : quotaOfRow({ plan: 'free', monthly_limit: null, started_at: null, usage: null });
  };
  if (key) {
    const known = await replayIfKnown(deps.db.sql, ctx.tenantId, key, hash);
    if (known) return replayed(known, await quotaNow());
  }
  // Without a cache every decision is on a fresh read; with one, the first is on the cached state.
  let fresh = !deps.tenantState;
  let state = await readState(deps, ctx.tenantId, false);
  for (let decisions = 1; ; decisions += 1) {
    let decision: Decision;
    try {
      decision = await decide(deps, ctx, requests, options, state, fresh);
    } catch (error) {
      // A refusal read from the cache is confirmed on a fresh read before it is answered.
      if (fresh || !(error instanceof ApiError)) throw error;
      fresh = true;
      state = await readState(deps, ctx.tenantId, true);
      continue;
    }
    let written: Awaited<ReturnType<typeof write>>;
    try {
      written = await write(deps, ctx, decision, options, key, hash);
    } catch (error) {
      if (!(error instanceof StaleState)) throw error;
      if (decisions >= MAX_DECISIONS)
        throw new ApiError(
          503,
          'TENANT_STATE_CHANGING',
          "The tenant's settings changed during this send several times; retry shortly.",
        );
      fresh = true;
      state = await readState(deps, ctx.tenantId, true);
      continue;
    }
    if ('raced' in written) {
      // Another request with this key committed first (we waited on its row): answer as it did.
      const known = await replayIfKnown(deps.db.sql, ctx.tenantId, key!, hash);
      if (!known)
        throw new ConflictError(
          'A request with this Idempotency-Key was being processed; retry shortly.',
          'IDEMPOTENCY_KEY_IN_USE',
        );
      return replayed(known, await quotaNow());
    }
    return finish(deps, ctx, decision, written.outcome, key);
  }
}

/** After the write: the usage this node knows, the workers woken, and a sync send delivered now. */
async function finish(
  deps: SendDeps,
  ctx: TenantContext,
  decision: Decision,
  outcome: InsertOutcome,
  key: string | null,
): Promise<SendAnswer> {
  const { insert, sends, body } = decision;
  const used = outcome.used ?? decision.quota.used + insert.counted;
  if (outcome.used !== null) deps.tenantState?.noteUsage(ctx.tenantId, insert.cycleStart, outcome.used);
  const answer: SendAnswer = {
    body,
    accepted: sends.map((s) => ({ id: s.id, messageId: s.messageId, to: s.request.to })),
    rejected: decision.rejected,
    suppressed: decision.suppressed,
    sync: null,
    replayed: false,
    quota: { ...decision.quota, used },
  };
  // A spooled send has no job: the MTA loops deliver it.
  if (sends.length > 0 && insert.spoolExpiryHours !== null) wakeMtaLoops(deps.db.sql);
  else if (sends.length > 0 && !insert.runAt) wakeQueueWithSql(deps.db.sql, 'send');
  if (!decision.sync) return answer;
  const { deliverEmailLog } = await import('./send-job.ts');
  const { countRelayAttempt } = await import('../metrics/count.ts');
  const metrics = deps.metrics;
  const delivered = await deliverEmailLog(
    {
      ...deps.db,
      config: deps.config,
      secrets: deps.secrets,
      mailTransports: deps.mailTransports,
      reactEmailSandbox: deps.reactEmailSandbox,
      countAttempt: metrics ? (log, result) => countRelayAttempt(metrics, log, result) : undefined,
    },
    sends[0].id,
    { attemptsSoFar: 0, maxAttempts: 1 },
  );
  await removeJob(deps.db.sequelize, 'send', sendJobKey(sends[0].id));
  const sync: SyncAnswer =
    delivered.status === 'SENT' && delivered.spooled
      ? await awaitSyncVerdict(deps.db.sql, {
          emailId: sends[0].id,
          tenantId: ctx.tenantId,
          waitMs: deps.config.syncDirectWaitMs,
        })
      : {
          status: delivered.status === 'SENT' ? 'SENT' : 'FAILED',
          ...(delivered.error ? { error: delivered.error } : {}),
        };
  const syncBody: SendAccepted = { ...(body as SendAccepted), ...sync };
  if (key)
    await completeKey(deps.db.sql, ctx.tenantId, key, {
      statusCode: sync.status === 'SENT' || sync.status === 'DELIVERED' ? 200 : 202,
      body: syncBody,
    });
  return { ...answer, body: syncBody, sync };
}
