// Settling attempts (shared by the worker's dispatcher and the API's test events): the batch
// statement of sql/delivery-store.ts, then a mail to the owners of every endpoint it switched off.
// Also the synchronous `test` action: one attempt, made by the request itself.
import { QueryTypes, type Sequelize } from 'sequelize';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import type { Sql } from '../../db/sql.ts';
import type { Secrets } from '../../secrets.ts';
import { unseal } from '../../crypto/sealed.ts';
import { sendSystemMail } from '../../mail/system-mail.ts';
import { attemptOnce, skippedOutcome, type DeliveryOutcome } from './attempt.ts';
import { AUTO_DISABLE_AFTER_FAILURES, claimDelivery, settleDeliveries } from './sql/delivery-store.ts';
import { resolveDeliveryTarget } from './url-guard.ts';

export { AUTO_DISABLE_AFTER_FAILURES } from './sql/delivery-store.ts';
export { buildDeliveryHeaders } from './attempt.ts';

export interface DeliveryDeps {
  sequelize: Sequelize;
  sql: Sql;
  config: Config;
  secrets: Secrets;
  log?: Logger;
}

/**
 * Settles outcomes this worker holds and mails the owners of endpoints switched off by them.
 * Answers how many were settled once the statement is done, and the mails as a promise of their
 * own (never rejected): the dispatcher does not hold other endpoints' outcomes while they go out.
 */
export async function settleOutcomes(
  deps: DeliveryDeps,
  workerId: string,
  outcomes: DeliveryOutcome[],
): Promise<{ settled: number; notices: Promise<void> }> {
  if (outcomes.length === 0) return { settled: 0, notices: Promise.resolve() };
  const { settled, disabledEndpoints } = await settleDeliveries(deps.sql, workerId, outcomes);
  const notices = (async () => {
    for (const endpointId of disabledEndpoints) {
      const gone = outcomes.some((o) => o.endpointId === endpointId && o.endpointEffect === 'gone');
      await notifyOwnersOfDisabledEndpoint(deps, endpointId, gone ? 'gone' : 'failing');
    }
  })().catch((error: unknown) =>
    deps.log?.warn({ err: error, disabledEndpoints }, 'could not mail the owners of disabled webhook endpoints'),
  );
  return { settled, notices };
}

const TEST_LEASE_MS = 60_000;

/**
 * The `test` action's single attempt (the delivery was created with no due time, so no worker takes
 * it), settled like any other. Answers nothing: the caller reads the delivery row.
 */
export async function attemptDelivery(deps: DeliveryDeps, deliveryId: string): Promise<void> {
  const holder = `api:test:${deliveryId}`;
  const delivery = await claimDelivery(deps.sql, deliveryId, holder, TEST_LEASE_MS);
  if (!delivery) return;
  const outcome =
    !delivery.enabled && delivery.eventType !== 'test'
      ? skippedOutcome(delivery)
      : await attemptOnce(delivery, {
          config: deps.config,
          secret: unseal(deps.secrets.encryptionKey, delivery.secretEncrypted),
          target: () => resolveDeliveryTarget(delivery.url, deps.config),
        });
  await (
    await settleOutcomes(deps, holder, [outcome])
  ).notices;
}

/** Mails every owner of the tenant; a mail that cannot be sent is logged, never retried here. */
async function notifyOwnersOfDisabledEndpoint(
  deps: DeliveryDeps,
  endpointId: string,
  reason: 'gone' | 'failing',
): Promise<void> {
  const owners = await deps.sequelize.query<{ email: string; tenant_name: string; url: string }>(
    `SELECT a.email, t.name AS tenant_name, e.url
       FROM webhook_endpoints e
       JOIN memberships m ON m.tenant_id = e.tenant_id AND m.role = 'owner'
       JOIN admins a ON a.id = m.admin_id JOIN tenants t ON t.id = e.tenant_id
      WHERE e.id = :endpointId`,
    { replacements: { endpointId }, type: QueryTypes.SELECT },
  );
  const why =
    reason === 'gone'
      ? 'it answered 410 Gone, which tells us to stop sending'
      : `its last ${AUTO_DISABLE_AFTER_FAILURES} delivery attempts failed in a row`;
  for (const owner of owners) {
    const text = [
      `The webhook endpoint ${owner.url} of ${owner.tenant_name} was disabled because ${why}.`,
      '',
      'Events are no longer sent to it. Fix the receiver, send a test event, then switch the endpoint back on',
      `(PATCH /webhooks/endpoints/${endpointId}/toggle). Failed deliveries can be replayed.`,
    ].join('\n');
    const html =
      `<p>The webhook endpoint <code>${escapeHtml(owner.url)}</code> of ${escapeHtml(owner.tenant_name)} was disabled because ${escapeHtml(why)}.</p>` +
      `<p>Events are no longer sent to it. Fix the receiver, send a test event, then switch the endpoint back on (<code>PATCH /webhooks/endpoints/${endpointId}/toggle</code>). Failed deliveries can be replayed.</p>`;
    try {
      await sendSystemMail(deps, {
        to: owner.email,
        subject: `Webhook endpoint disabled: ${new URL(owner.url).host}`,
        text,
        html,
      });
    } catch (error) {
      deps.log?.warn({ err: error, endpointId }, 'could not mail a tenant owner about a disabled webhook endpoint');
    }
  }
}

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}
