// When a deferred message is tried again: the base doubles per attempt up to four hours (Postfix's
// maximal_backoff_time is 4000 s; the issue asks for 5 min doubling to 4 h), with the relay path's
// ±20 % jitter so that a destination that deferred a burst does not get the burst back at once. A
// message whose next try would fall after its expiry bounces instead (Postfix: maximal_queue_lifetime).
import { backoffDelayMs } from '../queue/backoff.ts';

export const MAX_RETRY_DELAY_MS = 4 * 60 * 60_000;
export const DEFAULT_DELIVERY_EXPIRY_HOURS = 120;

export type NextAttempt = { kind: 'retry'; runAt: Date } | { kind: 'expired' };

export function nextAttempt(input: {
  /** Attempts made so far, including the one that just deferred. */
  attempts: number;
  baseMs: number;
  expiresAt: Date;
  now?: Date;
}): NextAttempt {
  const now = input.now ?? new Date();
  const delayMs = backoffDelayMs(Math.max(0, input.attempts - 1), input.baseMs, MAX_RETRY_DELAY_MS);
  const runAt = new Date(now.getTime() + delayMs);
  return runAt.getTime() > input.expiresAt.getTime() ? { kind: 'expired' } : { kind: 'retry', runAt };
}

/** When a message accepted at `acceptedAt` stops being retried. */
export function expiryOf(acceptedAt: Date, expiryHours = DEFAULT_DELIVERY_EXPIRY_HOURS): Date {
  return new Date(acceptedAt.getTime() + expiryHours * 60 * 60_000);
}
