// One delivery attempt and what it means: sign afresh (new timestamp every attempt), check the
// target (url-guard), POST, and turn the answer into the delivery's next state under the spec's
// retry rules (5 attempts, exponential backoff from WEBHOOK_RETRY_BASE_MS, 10 s timeout, 2xx
// success, the last status kept; 410 disables the endpoint; 429 + Retry-After pauses it).
import { errorText } from '../../errors.ts';
import type http from 'node:http';
import type { Config } from '../../config.ts';
import { backoffDelayMs } from '../../queue/backoff.ts';
import { USER_AGENT_LABEL } from '../../../shared/constants.ts';
import { signStandardWebhook, signWebhookPayload } from '../../../shared/webhooks.ts';
import { FAST_ANSWER_MS, retryAfterMs, type AnswerKind } from './endpoint-lane.ts';
import { postToTarget, WebhookTransportError, type PostResult } from './http-post.ts';
import type { DeliveryTarget } from './url-guard.ts';

/** A delivery as a claim returns it (sql/delivery-store.ts): what one attempt needs. */
export interface ClaimedDelivery {
  id: string;
  /** created_at as PostgreSQL prints it (microseconds kept): with the id, the primary key. */
  createdAt: string;
  tenantId: string;
  endpointId: string;
  eventType: string;
  /** The payload exactly as stored (json keeps the key order we sign). */
  body: string;
  attempt: number;
  maxAttempts: number;
  url: string;
  secretEncrypted: string;
  enabled: boolean;
}

export interface DeliveryOutcome {
  deliveryId: string;
  /** The delivery's created_at as PostgreSQL prints it: with the id, its primary key (see sql/delivery-store.ts). */
  deliveryCreatedAt: string;
  endpointId: string;
  /** False when the delivery was settled without a request (its endpoint is off). */
  attempted: boolean;
  attempt: number;
  status: 'succeeded' | 'failed' | 'pending' | 'skipped';
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  /** When the next attempt is due (pending only). */
  dueAt: Date | null;
  /** The backoff chosen for the next attempt (pending only). */
  delayMs: number | null;
  /** What the attempt says about the endpoint's failure streak; null: nothing. */
  endpointEffect: 'success' | 'failure' | 'gone' | null;
  /** The receiver asked for a pause (429 + Retry-After) until then. */
  pauseUntil: Date | null;
  /** For the endpoint's adaptive concurrency. */
  answer: AnswerKind;
}

export function buildDeliveryHeaders(options: {
  deliveryId: string;
  eventType: string;
  body: string;
  secret: string;
  timestamp: number;
}): Record<string, string> {
  return {
    'user-agent': USER_AGENT_LABEL,
    'content-type': 'application/json',
    'x-service-event': options.eventType,
    'x-service-delivery-id': options.deliveryId,
    'x-service-signature': signWebhookPayload({
      payload: options.body,
      secret: options.secret,
      timestamp: options.timestamp,
    }),
    'webhook-id': options.deliveryId,
    'webhook-timestamp': String(options.timestamp),
    'webhook-signature': signStandardWebhook({
      id: options.deliveryId,
      payload: options.body,
      secret: options.secret,
      timestamp: options.timestamp,
    }),
  };
}

function describeAnswer(result: PostResult): string {
  if (result.statusCode >= 300 && result.statusCode < 400)
    return `the receiver answered ${result.statusCode} (redirects are not followed)`;
  return `the receiver answered ${result.statusCode}`;
}

/** A delivery whose endpoint was switched off before its attempt: settled, not sent. */
export function skippedOutcome(delivery: ClaimedDelivery): DeliveryOutcome {
  return {
    deliveryId: delivery.id,
    deliveryCreatedAt: delivery.createdAt,
    endpointId: delivery.endpointId,
    attempted: false,
    attempt: delivery.attempt,
    status: 'skipped',
    statusCode: null,
    responseBody: null,
    error: 'the endpoint was disabled before this delivery was attempted',
    dueAt: null,
    delayMs: null,
    endpointEffect: null,
    pauseUntil: null,
    answer: 'other',
  };
}

export interface AttemptTools {
  config: Config;
  /** The endpoint's signing secret, unsealed. */
  secret: string;
  /** The checked target (url-guard); throws UnsafeWebhookUrlError. */
  target: () => Promise<DeliveryTarget>;
  /** A keep-alive agent for the target, or none (a one-off connection). */
  agent?: (target: DeliveryTarget) => http.Agent;
}

export async function attemptOnce(delivery: ClaimedDelivery, tools: AttemptTools): Promise<DeliveryOutcome> {
  const attempt = delivery.attempt + 1;
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = buildDeliveryHeaders({
    deliveryId: delivery.id,
    eventType: delivery.eventType,
    body: delivery.body,
    secret: tools.secret,
    timestamp,
  });
  let answer: PostResult | null = null;
  let error: string | null = null;
  let timedOut = false;
  let transportFailed = false;
  const started = performance.now();
  try {
    const target = await tools.target();
    answer = await postToTarget(target, headers, delivery.body, { agent: tools.agent?.(target) });
    if (answer.statusCode < 200 || answer.statusCode >= 300) error = describeAnswer(answer);
  } catch (caught) {
    error = errorText(caught);
    transportFailed = caught instanceof WebhookTransportError;
    timedOut = caught instanceof WebhookTransportError && caught.timedOut;
  }
  const tookMs = performance.now() - started;

  const code = answer?.statusCode ?? null;
  const gone = code === 410;
  const exhausted = attempt >= delivery.maxAttempts;
  const pauseMs = code === 429 ? retryAfterMs(answer!.retryAfter) : null;
  const status = error === null ? 'succeeded' : gone || exhausted ? 'failed' : 'pending';
  // The spec's backoff; a receiver that asked for a longer pause gets it.
  const delayMs =
    status === 'pending' ? Math.max(backoffDelayMs(attempt - 1, tools.config.webhookRetryBaseMs), pauseMs ?? 0) : null;
  const unreachable = transportFailed && !timedOut;
  const overloaded = timedOut || code === 429 || (code !== null && code >= 500);
  return {
    deliveryId: delivery.id,
    deliveryCreatedAt: delivery.createdAt,
    endpointId: delivery.endpointId,
    attempted: true,
    attempt,
    status,
    statusCode: code,
    responseBody: answer?.body ?? null,
    error,
    dueAt: delayMs === null ? null : new Date(Date.now() + delayMs),
    delayMs,
    endpointEffect: error === null ? 'success' : gone ? 'gone' : 'failure',
    pauseUntil: pauseMs === null ? null : new Date(Date.now() + pauseMs),
    answer:
      error === null
        ? tookMs < FAST_ANSWER_MS
          ? 'fast-success'
          : 'slow-success'
        : unreachable
          ? 'unreachable'
          : overloaded
            ? 'overloaded'
            : 'other',
  };
}
