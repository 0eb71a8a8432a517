// One delivery attempt of an email log: render, compose, deliver, and say what to record. The drain
// (daemon/jobs/send-loop.ts) claims logs in batches and records the attempts of a batch in one
// statement (daemon/modules/emails/drain.ts); deliverEmailLog does the same for one log (?sync=true, and
// the single-job handler). Delivery is at-least-once: a log already past QUEUED/SENDING is not
// sent again, and the Message-ID was fixed at accept time so a duplicate after a crash is recognisable.
import { errorText } from '../../errors.ts';
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import type { Sql } from '../../db/sql.ts';
import type { Secrets } from '../../secrets.ts';
import type { JobOutcome } from '../../queue/types.ts';
import type { JobHandler } from '../../mail/worker-context.ts';
import { backoffDelayMs } from '../../queue/backoff.ts';
import {
  markSending,
  recordSendOutcomes,
  type LogOutcome,
  type OutcomeEvent,
  type RawSendLog,
  type SendOutcomes,
  type TimelineRow,
} from './drain.ts';
import { UNCHANGED_LOG_FIELDS } from './sql/record-outcomes.ts';
import { RESTORE_SENT } from './sql/claim-sends.ts';
import { composeMessage, isCampaignSend, type ComposableEmail } from '../../mail/compose.ts';
import { classifyDeliveryError, type RelayTarget } from '../../mail/transport.ts';
import type { MailResources } from '../../mail/resources.ts';
import {
  HARD_BOUNCE_CODES,
  inboundMailDomain,
  platformInboundDomain,
  replyAddress,
  verpReturnPath,
} from '../../mail/addresses.ts';
import { renderTemplateForSend } from '../templates/render.ts';
import type { NormalizedAttachment } from '../../mail/compose.ts';
import type { DeliveryOutcome } from '../../mail/delivery-outcome.ts';
import { outcomeEventRows, recordDeliveryOutcome } from './outcomes.ts';
import { createSendContextCache, type SendContextCache } from './send-context.ts';

/** The relay pools deliver, the sandbox renders a React Email template. */
export interface DeliveryDeps extends Pick<MailResources, 'mailTransports' | 'reactEmailSandbox'> {
  sequelize: Sequelize;
  sql: Sql;
  config: Config;
  secrets: Secrets;
  /**
   * Counts a recorded attempt on this node's /metrics (a sync send in the API thread; the drain counts its
   * own batches in jobs/send-loop.ts). A port, so that this file does not import metrics/count.ts, which
   * reads its types.
   */
  countAttempt?: (log: RawSendLog, result: AttemptResult) => void;
}

export interface DeliveryAttempt {
  /** Attempts made before this one. */
  attemptsSoFar: number;
  maxAttempts: number;
  /**
   * The attempt this is on the log, where its outcome counts it (the drain: its claim reads logs without
   * writing them); absent where the log counted it before (markSending).
   */
  logAttempt?: number;
}

export type DeliveryStatus =
  /** `spooled`: handed to the outbound MTA (DELIVERY=direct), which has not tried the recipient's server yet. */
  | { status: 'SENT'; error?: undefined; spooled?: boolean }
  | { status: 'FAILED' | 'BOUNCED'; error: string }
  | { status: 'RETRY'; error: string; delayMs: number }
  | { status: 'SKIPPED'; error?: undefined };

/** A claimed log as compose and relay read it. */
export interface SendLog extends ComposableEmail {
  /** With the id, the log's primary key: the outcome is written by it. */
  createdAt: string;
  projectId: string | null;
  templateVersionId: string | null;
  data: Record<string, unknown> | null;
  locale: string | null;
  testMode: boolean;
}

export function sendLogOf(raw: RawSendLog): SendLog {
  return {
    id: raw.id,
    createdAt: raw.created_at,
    tenantId: raw.tenant_id,
    messageId: raw.message_id,
    fromAddress: raw.from_address,
    toAddresses: raw.to_addresses,
    ccAddresses: raw.cc_addresses,
    bccAddresses: raw.bcc_addresses,
    replyTo: raw.reply_to,
    subject: raw.subject,
    htmlBody: raw.html_body,
    textBody: raw.text_body,
    headers: raw.headers ?? {},
    tags: raw.tags,
    attachments: (raw.attachments ?? []) as NormalizedAttachment[],
    trackOpens: raw.track_opens,
    trackClicks: raw.track_clicks,
    metadata: raw.metadata,
    projectId: raw.project_id,
    templateVersionId: raw.template_version_id,
    data: raw.data,
    locale: raw.locale,
    testMode: raw.test_mode,
  };
}

/** What one attempt asks to record: the rows for the batch statement, and bounces to record after it. */
export interface AttemptResult {
  status: DeliveryStatus;
  /** What the log records; null when it is written already (the spool's statement did). */
  log: LogOutcome | null;
  timeline: TimelineRow[];
  events: OutcomeEvent[];
  /** Recipients refused for good: suppressed and counted toward the pause once the batch is recorded. */
  bounces: DeliveryOutcome[];
  /** The log stays SENT after its bounces (the relay took the message for the other recipients). */
  keepSent: boolean;
}

async function relayFor(deps: DeliveryDeps, cache: SendContextCache, log: SendLog): Promise<RelayTarget> {
  if (log.testMode) return { kind: 'capture' };
  if (log.projectId) {
    const settings = await cache.projectRelay(log.tenantId, log.projectId);
    if (settings) return { kind: 'smtp', settings };
  }
  return deps.mailTransports.defaultRelay();
}

async function renderIfTemplate(deps: DeliveryDeps, log: SendLog): Promise<boolean> {
  if (!log.templateVersionId) return false;
  const rendered = await renderTemplateForSend(
    deps,
    { tenantId: log.tenantId },
    { versionId: log.templateVersionId, data: log.data },
  );
  log.subject = rendered.subject;
  log.htmlBody = rendered.html;
  log.textBody = rendered.text;
  return true;
}

/**
 * One delivery attempt of a claimed log (QUEUED; SENDING when marked for a send in its request). Writes nothing but a captured message; what
 * to record comes back. Throws only when it could not decide (the sender's domain could not be read):
 * the caller retries the job later.
 */
export async function attemptDelivery(
  deps: DeliveryDeps,
  cache: SendContextCache,
  log: SendLog,
  attempt: DeliveryAttempt,
): Promise<AttemptResult> {
  const [signing, target, replyAddresses] = await Promise.all([
    cache.signing(log.tenantId, log.fromAddress),
    relayFor(deps, cache, log),
    // Only asked for a send without a Reply-To of its own: one that has one keeps it.
    log.replyTo.length === 0 ? cache.replyAddresses(log.tenantId) : false,
  ]);
  // What every outcome of this attempt writes on the log, beside its status: the log's key and the attempt.
  const thisLog = {
    ...UNCHANGED_LOG_FIELDS,
    emailId: log.id,
    createdAt: log.createdAt,
    attempt: attempt.logAttempt ?? null,
  };
  const failed = (message: string, fields: Partial<LogOutcome>, extra: Record<string, unknown>): AttemptResult => {
    const rows = outcomeEventRows(log, 'email.failed', extra);
    return {
      status: { status: 'FAILED', error: message },
      log: {
        ...thisLog,
        status: 'FAILED',
        error: message,
        ...fields,
      },
      timeline: [rows.timeline],
      events: [rows.event],
      bounces: [],
      keepSent: false,
    };
  };

  let composed;
  let rendered = false;
  try {
    rendered = await renderIfTemplate(deps, log);
    composed = composeMessage(log, {
      publicUrl: deps.config.publicUrl,
      linkSigningKey: deps.secrets.linkSigningKey,
      mailDomain: inboundMailDomain(deps.config),
      dkim: signing.dkim,
      envelopeFrom: signing.returnPath ? verpReturnPath(log.id, signing.returnPath, deps.secrets.linkSigningKey) : null,
      replyAddress: replyAddresses
        ? replyAddress(log.id, platformInboundDomain(deps.config), deps.secrets.linkSigningKey)
        : null,
      randomBytes: deps.mailTransports.randomBytes,
    });
  } catch (error) {
    // Rendering or composing cannot succeed on a retry: the message itself is at fault.
    const message = `the message could not be composed: ${errorText(error)}`;
    return failed(message, {}, { error: message });
  }
  const content = rendered ? { subject: log.subject, html: log.htmlBody, text: log.textBody } : {};
  const sentHeaders = JSON.stringify(composed.headers);

  try {
    const result = await deps.mailTransports.deliver(target, composed.message, {
      sql: deps.sql,
      tenantId: log.tenantId,
      emailId: log.id,
      projectId: log.projectId,
      stream: isCampaignSend(log) ? 'campaign' : 'transactional',
      log: { createdAt: log.createdAt, attempt: thisLog.attempt, sentHeaders, ...content },
    });
    if (result.spooled) return spooledResult(log, result.response);
    const rows = outcomeEventRows(log, 'email.sent', {
      captured: result.captured,
      response: result.response.slice(0, 300),
    });
    // Recipients the relay refused while it took the message for the others.
    const hard = result.rejected.filter((r) => r.responseCode !== null && HARD_BOUNCE_CODES.has(r.responseCode));
    return {
      status: { status: 'SENT' },
      log: {
        ...thisLog,
        ...content,
        status: 'SENT',
        error: null,
        smtpResponse: result.response.slice(0, 1000),
        captured: result.captured,
        sentHeaders,
      },
      timeline: [rows.timeline],
      events: [rows.event],
      bounces: hard.map((refused) => ({
        tenantId: log.tenantId,
        emailId: log.id,
        type: 'bounced',
        bounceType: 'hard',
        recipients: [refused.address],
        diagnostic: refused.response,
      })),
      keepSent: true,
    };
  } catch (error) {
    const failure = classifyDeliveryError(error);
    const lastAttempt = attempt.attemptsSoFar + 1 >= attempt.maxAttempts;
    if (failure.kind === 'transient' && !lastAttempt) {
      const delayMs = backoffDelayMs(attempt.attemptsSoFar, deps.config.sendRetryBaseMs);
      return {
        status: { status: 'RETRY', error: failure.message, delayMs },
        log: {
          ...thisLog,
          status: 'QUEUED',
          error: failure.message,
        },
        timeline: [
          {
            tenantId: log.tenantId,
            emailId: log.id,
            type: 'deferred',
            data: { error: failure.message, responseCode: failure.responseCode, retryInMs: delayMs },
          },
        ],
        events: [],
        bounces: [],
        keepSent: false,
      };
    }
    const allHardBounced = failure.hardBounces.length > 0 && failure.kind === 'permanent';
    const result = failed(
      failure.message,
      { ...content, smtpResponse: failure.message, sentHeaders },
      { error: failure.message, responseCode: failure.responseCode },
    );
    if (!allHardBounced) return result;
    return {
      ...result,
      status: { status: 'BOUNCED', error: failure.message },
      bounces: [
        {
          tenantId: log.tenantId,
          emailId: log.id,
          type: 'bounced',
          bounceType: 'hard',
          recipients: failure.hardBounces,
          diagnostic: failure.message,
        },
      ],
      keepSent: false,
    };
  }
}

/**
 * Spooled for direct delivery: the spool rows keep what the log records of the attempt, written with its
 * first outcome (daemon/jobs/mta-loop.ts, emails/sql/spooled-log.ts); the timeline says it was handed over.
 */
function spooledResult(log: SendLog, response: string): AttemptResult {
  return {
    status: { status: 'SENT', spooled: true },
    log: null,
    timeline: [{ tenantId: log.tenantId, emailId: log.id, type: 'spooled', data: { response } }],
    events: [],
    bounces: [],
    keepSent: false,
  };
}

/**
 * After the batch is recorded: hard bounces suppress their recipients and count toward the sending risk
 * (recordDeliveryOutcome, the path provider reports take too). Rare, so one at a time.
 */
export async function recordBounces(
  deps: Pick<DeliveryDeps, 'sequelize' | 'sql' | 'config' | 'secrets'>,
  result: Pick<AttemptResult, 'bounces' | 'keepSent'>,
): Promise<void> {
  for (const bounce of result.bounces) await recordDeliveryOutcome(deps, bounce);
  if (result.bounces.length && result.keepSent) await deps.sql.count(RESTORE_SENT, [result.bounces[0].emailId]);
}

/** The rows of several attempts as one batch for recordSendOutcomes. */
export function outcomesOf(
  results: AttemptResult[],
  jobs: Pick<SendOutcomes, 'done' | 'retry' | 'fail'>,
): SendOutcomes {
  return {
    ...jobs,
    logs: results.flatMap((r) => (r.log ? [r.log] : [])),
    timeline: results.flatMap((r) => r.timeline),
    events: results.flatMap((r) => r.events),
  };
}

/** One delivery attempt of the log `emailId`, recorded at once (no job involved). */
export async function deliverEmailLog(
  deps: DeliveryDeps,
  emailId: string,
  attempt: DeliveryAttempt,
): Promise<DeliveryStatus> {
  const raw = await markSending(deps.sql, emailId);
  if (!raw) return { status: 'SKIPPED' };
  const result = await attemptDelivery(deps, createSendContextCache(deps.sql, deps.secrets), sendLogOf(raw), attempt);
  await recordSendOutcomes(deps.sql, '', outcomesOf([result], { done: [], retry: [], fail: [] }));
  await recordBounces(deps, result);
  deps.countAttempt?.(raw, result);
  return result.status;
}

/** A delivery's status as the queue's outcome: a refused message is the log's outcome, not the job's failure. */
export function jobOutcomeOf(status: DeliveryStatus): JobOutcome {
  return status.status === 'RETRY' ? { kind: 'retry', delayMs: status.delayMs, error: status.error } : { kind: 'done' };
}

/** The single-job handler (the drain claims in batches instead: daemon/jobs/send-loop.ts). */
export const handleSendJob: JobHandler = async (job, ctx) => {
  const emailId = job.payload.emailId;
  if (typeof emailId !== 'string') return { kind: 'fail', error: 'send job without an emailId' };
  return jobOutcomeOf(
    await deliverEmailLog(ctx, emailId, { attemptsSoFar: job.attempts, maxAttempts: job.maxAttempts }),
  );
};
