// The send worker's job: load the log, render, compose, deliver, record. Also used in the request
// for ?sync=true. Delivery is at-least-once: a log already past QUEUED/SENDING is not sent again,
// and the Message-ID was fixed at accept time so a duplicate after a crash is recognisable.
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import type { Secrets } from '../../secrets.ts';
import type { JobHandler } from '../../queue/types.ts';
import { backoffDelayMs } from '../../queue/backoff.ts';
import { composeMessage } from '../../mail/compose.ts';
import { classifyDeliveryError, defaultRelay, deliverMessage, type RelayTarget } from '../../mail/transport.ts';
import { inboundMailDomain } from '../inbound-mail/addresses.ts';
import { loadTemplateRenderer } from '../../mail/template-hook.ts';
import { dkimFor } from '../domains/signing.ts';
import { returnPathFor } from '../domains/service.ts';
import { projectSmtpSettings } from '../projects/service.ts';
import { EmailLog } from './model.ts';
import { recordDeliveryOutcome, recordEmailEvent, recordEmailOutcomeEvent } from './outcomes.ts';
import { bareAddress } from './validate.ts';

export interface DeliveryDeps {
  sequelize: Sequelize;
  config: Config;
  secrets: Secrets;
}

export interface DeliveryAttempt {
  /** Attempts made before this one. */
  attemptsSoFar: number;
  maxAttempts: number;
}

export type DeliveryStatus =
  | { status: 'SENT'; error?: undefined }
  | { status: 'FAILED' | 'BOUNCED'; error: string }
  | { status: 'RETRY'; error: string; delayMs: number }
  | { status: 'SKIPPED'; error?: undefined };

async function relayFor(deps: DeliveryDeps, log: EmailLog): Promise<RelayTarget> {
  if (log.testMode) return { kind: 'capture' };
  if (log.projectId) {
    const settings = await projectSmtpSettings(log.tenantId, log.projectId, deps.secrets);
    if (settings) return { kind: 'smtp', settings };
  }
  return defaultRelay(deps.config);
}

async function renderIfTemplate(deps: DeliveryDeps, log: EmailLog): Promise<void> {
  if (!log.templateVersionId) return;
  const render = await loadTemplateRenderer();
  if (!render) throw new Error('template rendering is not available');
  const rendered = await render(log.templateVersionId, log.data ?? {}, log.locale, { sequelize: deps.sequelize, tenantId: log.tenantId });
  log.subject = rendered.subject;
  log.htmlBody = rendered.html;
  log.textBody = rendered.text;
}

/** One delivery attempt of the log `emailId`; records the result and says what the queue should do. */
export async function deliverEmailLog(deps: DeliveryDeps, emailId: string, attempt: DeliveryAttempt): Promise<DeliveryStatus> {
  const { sequelize } = deps;
  // Read and mark in one statement; a log gone or already settled (SENT, FAILED, cancelled …) is skipped.
  const [log] = await sequelize.query<EmailLog>(
    `UPDATE email_logs SET status = 'SENDING', attempts = attempts + 1, updated_at = :now
      WHERE id = :emailId AND status IN ('QUEUED', 'SENDING') RETURNING *`,
    { replacements: { emailId, now: new Date() }, type: QueryTypes.SELECT, model: EmailLog, mapToModel: true },
  );
  if (!log) return { status: 'SKIPPED' };

  let composed;
  let target: RelayTarget;
  try {
    await renderIfTemplate(deps, log);
    const fromDomain = bareAddress(log.fromAddress).split('@')[1] ?? '';
    const [dkim, returnPath] = await Promise.all([
      dkimFor(sequelize, deps.secrets, log.tenantId, fromDomain),
      returnPathFor(sequelize, log.tenantId, fromDomain),
    ]);
    composed = composeMessage(log, {
      publicUrl: deps.config.publicUrl,
      linkSigningKey: deps.secrets.linkSigningKey,
      mailDomain: inboundMailDomain(deps.config),
      dkim,
      envelopeFrom: returnPath ? `bounce-${log.id}@${returnPath}` : null,
    });
    target = await relayFor(deps, log);
  } catch (error) {
    // Rendering or composing cannot succeed on a retry: the message itself is at fault.
    const message = `the message could not be composed: ${error instanceof Error ? error.message : String(error)}`;
    await sequelize.transaction(async (tx) => {
      await log.update({ status: 'FAILED', error: message }, { transaction: tx });
      await recordEmailOutcomeEvent(sequelize, log, 'email.failed', { error: message }, tx);
    });
    return { status: 'FAILED', error: message };
  }

  try {
    const result = await deliverMessage(target, composed.message, { sequelize, tenantId: log.tenantId, emailId: log.id }, deps.config);
    await sequelize.transaction(async (tx) => {
      await log.update({
        status: 'SENT',
        sentAt: new Date(),
        error: null,
        smtpResponse: result.response.slice(0, 1000),
        captured: result.captured,
        sentHeaders: composed.headers,
        subject: log.subject,
        htmlBody: log.htmlBody,
        textBody: log.textBody,
      }, { transaction: tx });
      await recordEmailOutcomeEvent(sequelize, log, 'email.sent', { captured: result.captured, response: result.response.slice(0, 300) }, tx);
    });
    // Recipients the relay refused while it took the message for the others.
    const hard = result.rejected.filter((r) => r.responseCode !== null && [550, 551, 553].includes(r.responseCode));
    for (const refused of hard) {
      await recordDeliveryOutcome(sequelize, { tenantId: log.tenantId, emailId: log.id, type: 'bounced', bounceType: 'hard', recipients: [refused.address], diagnostic: refused.response });
    }
    if (hard.length) await log.update({ status: 'SENT' });
    return { status: 'SENT' };
  } catch (error) {
    const failure = classifyDeliveryError(error);
    const lastAttempt = attempt.attemptsSoFar + 1 >= attempt.maxAttempts;
    if (failure.kind === 'transient' && !lastAttempt) {
      const delayMs = backoffDelayMs(attempt.attemptsSoFar, deps.config.sendRetryBaseMs);
      await sequelize.transaction(async (tx) => {
        await log.update({ status: 'QUEUED', error: failure.message }, { transaction: tx });
        await recordEmailEvent(sequelize, { tenantId: log.tenantId, emailId: log.id, type: 'deferred', data: { error: failure.message, responseCode: failure.responseCode, retryInMs: delayMs } }, tx);
      });
      return { status: 'RETRY', error: failure.message, delayMs };
    }
    const allHardBounced = failure.hardBounces.length > 0 && failure.kind === 'permanent';
    await sequelize.transaction(async (tx) => {
      await log.update({ status: 'FAILED', error: failure.message, smtpResponse: failure.message, sentHeaders: composed.headers }, { transaction: tx });
      await recordEmailOutcomeEvent(sequelize, log, 'email.failed', { error: failure.message, responseCode: failure.responseCode }, tx);
      if (allHardBounced) {
        await recordDeliveryOutcome(sequelize, { tenantId: log.tenantId, emailId: log.id, type: 'bounced', bounceType: 'hard', recipients: failure.hardBounces, diagnostic: failure.message }, tx);
      }
    });
    return { status: allHardBounced ? 'BOUNCED' : 'FAILED', error: failure.message };
  }
}

export const handleSendJob: JobHandler = async (job, ctx) => {
  const emailId = job.payload.emailId;
  if (typeof emailId !== 'string') return { kind: 'fail', error: 'send job without an emailId' };
  const outcome = await deliverEmailLog(ctx, emailId, { attemptsSoFar: job.attempts, maxAttempts: job.maxAttempts });
  switch (outcome.status) {
    case 'SENT':
    case 'SKIPPED':
    case 'FAILED':
    case 'BOUNCED':
      // A refused message is the log's outcome, not the job's failure: the job is done.
      return { kind: 'done' };
    case 'RETRY':
      return { kind: 'retry', delayMs: outcome.delayMs, error: outcome.error };
  }
};
