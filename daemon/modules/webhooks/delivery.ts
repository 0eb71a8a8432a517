// One delivery attempt: sign afresh, check the target again, POST, and record what happened on the
// delivery row and on the endpoint (failure streak, disabling). Used by the webhook job handler and
// by the synchronous `test` action.
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Secrets } from '../../secrets.ts';
import { unseal } from '../../crypto/sealed.ts';
import { backoffDelayMs } from '../../queue/backoff.ts';
import { sendSystemMail } from '../../mail/system-mail.ts';
import { USER_AGENT_LABEL } from '../../../shared/constants.ts';
import { signStandardWebhook, signWebhookPayload } from '../../../shared/webhooks.ts';
import { WebhookDeliveryRecord, WebhookEndpointRecord } from './model.ts';
import { postToTarget, type PostResult } from './http-post.ts';
import { resolveDeliveryTarget } from './url-guard.ts';

/** After this many failed attempts in a row (across deliveries) the endpoint is switched off. */
export const AUTO_DISABLE_AFTER_FAILURES = 20;

export interface DeliveryDeps {
  sequelize: Sequelize;
  config: Config;
  secrets: Secrets;
  log?: Logger;
}

export type AttemptResult =
  | { kind: 'succeeded' }
  /** Failed; the next attempt is due in delayMs. */
  | { kind: 'retry'; delayMs: number; error: string }
  /** Failed for good: attempts used up, or the receiver answered 410. */
  | { kind: 'failed'; error: string }
  /** Nothing to do: the delivery is gone, already settled, or its endpoint is off. */
  | { kind: 'skipped'; reason: string };

export function buildDeliveryHeaders(options: { deliveryId: string; eventType: string; body: string; secret: string; timestamp: number }): Record<string, string> {
  return {
    'user-agent': USER_AGENT_LABEL,
    'content-type': 'application/json',
    'x-service-event': options.eventType,
    'x-service-delivery-id': options.deliveryId,
    'x-service-signature': signWebhookPayload({ payload: options.body, secret: options.secret, timestamp: options.timestamp }),
    'webhook-id': options.deliveryId,
    'webhook-timestamp': String(options.timestamp),
    'webhook-signature': signStandardWebhook({ id: options.deliveryId, payload: options.body, secret: options.secret, timestamp: options.timestamp }),
  };
}

function describeAnswer(result: PostResult): string {
  if (result.statusCode >= 300 && result.statusCode < 400) return `the receiver answered ${result.statusCode} (redirects are not followed)`;
  return `the receiver answered ${result.statusCode}`;
}

export async function attemptDelivery(deps: DeliveryDeps, deliveryId: string): Promise<AttemptResult> {
  const delivery = await WebhookDeliveryRecord.findByPk(deliveryId);
  if (!delivery) return { kind: 'skipped', reason: 'the delivery no longer exists' };
  if (delivery.status !== 'pending') return { kind: 'skipped', reason: `the delivery is already ${delivery.status}` };
  const endpoint = await WebhookEndpointRecord.findOne({ where: { id: delivery.endpointId, tenantId: delivery.tenantId } });
  if (!endpoint) return { kind: 'skipped', reason: 'the endpoint no longer exists' };
  // A test event is how an owner checks an endpoint before switching it back on.
  if (!endpoint.enabled && delivery.eventType !== 'test') {
    await delivery.update({ status: 'skipped', error: 'the endpoint was disabled before this delivery was attempted', nextAttemptAt: null });
    return { kind: 'skipped', reason: 'the endpoint is disabled' };
  }

  const attempt = delivery.attempt + 1;
  const body = JSON.stringify(delivery.payload);
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = buildDeliveryHeaders({ deliveryId: delivery.id, eventType: delivery.eventType, body, secret: unseal(deps.secrets.encryptionKey, endpoint.secretEncrypted), timestamp });

  let answer: PostResult | null = null;
  let error: string | null = null;
  try {
    // Checked again at every attempt: the name may point elsewhere since the endpoint was created.
    const target = await resolveDeliveryTarget(endpoint.url, deps.config);
    answer = await postToTarget(target, headers, body);
    if (answer.statusCode < 200 || answer.statusCode >= 300) error = describeAnswer(answer);
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
  }

  const gone = answer?.statusCode === 410;
  const exhausted = attempt >= delivery.maxAttempts;
  const delayMs = backoffDelayMs(attempt - 1, deps.config.webhookRetryBaseMs);
  const status = error === null ? 'succeeded' : gone || exhausted ? 'failed' : 'pending';
  await delivery.update({
    attempt,
    status,
    statusCode: answer?.statusCode ?? null,
    responseBody: answer?.body ?? null,
    error,
    deliveredAt: new Date(),
    nextAttemptAt: status === 'pending' ? new Date(Date.now() + delayMs) : null,
  });
  await recordEndpointOutcome(deps, endpoint, error === null ? 'success' : gone ? 'gone' : 'failure');

  if (error === null) return { kind: 'succeeded' };
  if (gone) return { kind: 'failed', error: `${error}: the endpoint is gone and has been disabled` };
  if (exhausted) return { kind: 'failed', error: `${error} (attempt ${attempt} of ${delivery.maxAttempts}, giving up)` };
  return { kind: 'retry', delayMs, error: `${error} (attempt ${attempt} of ${delivery.maxAttempts})` };
}

async function recordEndpointOutcome(deps: DeliveryDeps, endpoint: WebhookEndpointRecord, outcome: 'success' | 'failure' | 'gone'): Promise<void> {
  const { sequelize } = deps;
  if (outcome === 'success') {
    await sequelize.query(`UPDATE webhook_endpoints SET consecutive_failures = 0 WHERE id = :id AND consecutive_failures <> 0`, { replacements: { id: endpoint.id } });
    return;
  }
  // One statement, so that two workers failing at once cannot both miss (or both cross) the threshold.
  const rows = await sequelize.query<{ disabled_now: boolean }>(
    `UPDATE webhook_endpoints e
        SET consecutive_failures = e.consecutive_failures + 1,
            enabled = CASE WHEN :gone OR e.consecutive_failures + 1 >= :limit THEN false ELSE e.enabled END,
            disabled_reason = CASE WHEN e.enabled AND (:gone OR e.consecutive_failures + 1 >= :limit)
                                   THEN (CASE WHEN :gone THEN 'gone' ELSE 'failing' END) ELSE e.disabled_reason END,
            disabled_at = CASE WHEN e.enabled AND (:gone OR e.consecutive_failures + 1 >= :limit) THEN now() ELSE e.disabled_at END,
            updated_at = now()
       FROM (SELECT id, enabled AS was_enabled FROM webhook_endpoints WHERE id = :id FOR UPDATE) before
      WHERE e.id = before.id
      RETURNING (before.was_enabled AND NOT e.enabled) AS disabled_now`,
    { replacements: { id: endpoint.id, gone: outcome === 'gone', limit: AUTO_DISABLE_AFTER_FAILURES }, type: QueryTypes.SELECT },
  );
  if (rows[0]?.disabled_now) {
    await notifyOwnersOfDisabledEndpoint(deps, endpoint, outcome === 'gone' ? 'gone' : 'failing');
  }
}

/** Mails every owner of the tenant; a mail that cannot be sent is logged, never retried here. */
async function notifyOwnersOfDisabledEndpoint(deps: DeliveryDeps, endpoint: WebhookEndpointRecord, reason: 'gone' | 'failing'): Promise<void> {
  const owners = await deps.sequelize.query<{ email: string; tenant_name: string }>(
    `SELECT a.email, t.name AS tenant_name
       FROM memberships m JOIN admins a ON a.id = m.admin_id JOIN tenants t ON t.id = m.tenant_id
      WHERE m.tenant_id = :tenantId AND m.role = 'owner'`,
    { replacements: { tenantId: endpoint.tenantId }, type: QueryTypes.SELECT },
  );
  const why = reason === 'gone'
    ? 'it answered 410 Gone, which tells us to stop sending'
    : `its last ${AUTO_DISABLE_AFTER_FAILURES} delivery attempts failed in a row`;
  for (const owner of owners) {
    const text = [
      `The webhook endpoint ${endpoint.url} of ${owner.tenant_name} was disabled because ${why}.`,
      '',
      'Events are no longer sent to it. Fix the receiver, send a test event, then switch the endpoint back on',
      `(PATCH /webhooks/endpoints/${endpoint.id}/toggle). Failed deliveries can be replayed.`,
    ].join('\n');
    const html = `<p>The webhook endpoint <code>${escapeHtml(endpoint.url)}</code> of ${escapeHtml(owner.tenant_name)} was disabled because ${escapeHtml(why)}.</p>`
      + `<p>Events are no longer sent to it. Fix the receiver, send a test event, then switch the endpoint back on (<code>PATCH /webhooks/endpoints/${endpoint.id}/toggle</code>). Failed deliveries can be replayed.</p>`;
    try {
      await sendSystemMail(deps, { to: owner.email, subject: `Webhook endpoint disabled: ${new URL(endpoint.url).host}`, text, html });
    } catch (error) {
      deps.log?.warn({ err: error, endpointId: endpoint.id }, 'could not mail a tenant owner about a disabled webhook endpoint');
    }
  }
}

function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
