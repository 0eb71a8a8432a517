// What one attempt of a spool row means, per recipient, for the row and for the email log: delivered
// and bounced recipients are done (their outcomes go through emails/outcomes.ts), deferred ones stay
// in the row for the next try at retry.ts's time, or bounce once that try would pass the row's expiry.
// Pure: the batch commit (commit.ts) writes what this answers in one transaction per batch.
import type { DeliveryOutcome } from '../mail/delivery-outcome.ts';
import type { RecipientResult } from './connection.ts';
import { deferredByError } from './outcome.ts';
import { nextAttempt } from './retry.ts';
import type { TlsSession } from './tls-report.ts';
import type { SourceUse } from './source-address.ts';
import type { SpooledRow, SpoolOutcome, SpoolRecipient } from './sql/spool.ts';

/** A timeline row for recipients that stay in flight: the last response and when the next try is. */
export interface Deferral {
  tenantId: string;
  emailId: string;
  recipients: string[];
  response: string;
  retryAt: string;
  /** A wait of ours, not the destination's deferral: nothing was sent (the log says `waiting`, stats count nothing). */
  wait?: 'warmup' | 'shaping';
}

export interface Settlement {
  spool: SpoolOutcome;
  outcomes: DeliveryOutcome[];
  deferral: Deferral | null;
  /** The attempt's TLS sessions, counted for TLS-RPT in the batch's commit (set by the loop). */
  tlsSessions?: TlsSession[];
  /** The pool address the attempt left from: counted toward its warm-up in the batch commit. */
  source?: SourceUse | null;
}

/** The recipients this attempt is for: those not yet delivered or bounced. */
export function pendingRecipients(row: Pick<SpooledRow, 'recipients'>): string[] {
  return row.recipients.filter((r) => r.state === 'pending' || r.state === 'deferred').map((r) => r.address);
}

/**
 * A shaping wait this long or longer (a throttle's next hour, a suspension, a paused tenant) is written
 * in the log's timeline; a shorter one is pacing, kept only on the row (the queue view's `waiting`).
 */
export const TIMELINE_WAIT_MS = 60_000;

/**
 * A row shaping held back (mta/shaping.ts): not an attempt, due again at `until`, its `reason` kept on
 * the row; a long wait whose reason is new to the row gets a `waiting` row in the log's timeline.
 */
export function releasedSettlement(
  row: SpooledRow,
  until: Date,
  reason: string | null = null,
  now = new Date(),
): Settlement {
  const owner = row.tenantId && row.emailId ? { tenantId: row.tenantId, emailId: row.emailId } : null;
  const told = owner && reason && reason !== row.waitReason && until.getTime() - now.getTime() >= TIMELINE_WAIT_MS;
  return {
    spool: { id: row.id, state: 'released', runAt: until, lastResponse: reason, recipients: row.recipients },
    outcomes: [],
    deferral: told
      ? {
          ...owner,
          recipients: pendingRecipients(row),
          response: reason,
          retryAt: until.toISOString(),
          wait: 'shaping',
        }
      : null,
  };
}

export function settleAttempt(
  row: SpooledRow,
  results: RecipientResult[],
  options: { retryBaseMs: number; now?: Date },
): Settlement {
  const byAddress = new Map(results.map((result) => [result.address, result.verdict]));
  const outcomes: DeliveryOutcome[] = [];
  const deferred: SpoolRecipient[] = [];
  const owner = row.tenantId && row.emailId ? { tenantId: row.tenantId, emailId: row.emailId } : null;
  const recipients = row.recipients.map((recipient): SpoolRecipient => {
    if (recipient.state === 'delivered' || recipient.state === 'bounced') return recipient;
    // Answered 2xx before a crash took the outcome with it: delivered, from the kept reply, not resent.
    if (recipient.state === 'answered') {
      if (owner) outcomes.push({ ...owner, type: 'delivered', recipients: [recipient.address] });
      return { ...recipient, state: 'delivered' };
    }
    // A recipient this attempt gave no verdict for is not finished: it is tried again, never dropped.
    const verdict = byAddress.get(recipient.address) ?? deferredByError('no answer for this recipient');
    if (verdict.kind === 'delivered') {
      if (owner) outcomes.push({ ...owner, type: 'delivered', recipients: [recipient.address] });
      return { ...recipient, state: 'delivered', response: verdict.response };
    }
    if (verdict.kind === 'bounced') {
      if (owner)
        outcomes.push({
          ...owner,
          type: 'bounced',
          bounceType: verdict.bounceType,
          final: true,
          recipients: [recipient.address],
          diagnostic: verdict.response,
        });
      return { ...recipient, state: 'bounced', response: verdict.response };
    }
    const kept: SpoolRecipient = { ...recipient, state: 'deferred', response: verdict.response };
    deferred.push(kept);
    return kept;
  });
  const lastResponse = deferred.at(-1)?.response ?? results.at(-1)?.verdict.response ?? null;
  if (deferred.length === 0)
    return { spool: { id: row.id, state: 'done', runAt: null, lastResponse, recipients }, outcomes, deferral: null };

  const next = nextAttempt({
    attempts: row.attempts + 1,
    baseMs: options.retryBaseMs,
    expiresAt: row.expiresAt,
    now: options.now,
  });
  if (next.kind === 'expired') {
    // Not the address's fault (a destination that never answered): bounced without suppression.
    for (const recipient of deferred) {
      recipient.state = 'bounced';
      if (owner)
        outcomes.push({
          ...owner,
          type: 'bounced',
          bounceType: 'soft',
          final: true,
          recipients: [recipient.address],
          diagnostic: `expired after ${row.attempts + 1} attempts; last response: ${recipient.response ?? ''}`,
        });
    }
    return { spool: { id: row.id, state: 'done', runAt: null, lastResponse, recipients }, outcomes, deferral: null };
  }
  return {
    spool: { id: row.id, state: 'deferred', runAt: next.runAt, lastResponse, recipients },
    outcomes,
    deferral: owner
      ? {
          ...owner,
          recipients: deferred.map((r) => r.address),
          response: lastResponse ?? '',
          retryAt: next.runAt.toISOString(),
        }
      : null,
  };
}

/**
 * A row not tried because its pool has no warm-up room left today (mta/source-address.ts): due again
 * at `until` without counting an attempt, its recipients unchanged, the reason in the timeline.
 */
export function waitSettlement(row: SpooledRow, wait: { poolId: string; until: Date; reason: string }): Settlement {
  const owner = row.tenantId && row.emailId ? { tenantId: row.tenantId, emailId: row.emailId } : null;
  return {
    spool: {
      id: row.id,
      state: 'waiting',
      runAt: wait.until,
      lastResponse: wait.reason,
      recipients: row.recipients,
      waitPool: wait.poolId,
    },
    outcomes: [],
    // Told once per reason: the row is woken at each new UTC day (or pool change) to find it still waiting.
    deferral:
      owner && wait.reason !== row.waitReason
        ? {
            ...owner,
            recipients: pendingRecipients(row),
            response: wait.reason,
            retryAt: wait.until.toISOString(),
            wait: 'warmup',
          }
        : null,
  };
}
