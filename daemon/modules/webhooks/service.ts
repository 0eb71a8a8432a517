// Webhook endpoints and their deliveries, for one tenant at a time.
import type { AppDeps } from '../../app-types.ts';
import type { Config } from '../../config.ts';
import type { TenantContext } from '../../context.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.ts';
import { seal } from '../../crypto/sealed.ts';
import { generateWebhookSecret } from '../../../shared/webhooks.ts';
import type {
  CreatedWebhookEndpoint,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookPayload,
} from '../../../shared/schemas/webhooks.ts';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from './model.ts';
import { modelsOf } from '../models.ts';
import { findDelivery, findDeliveryPage, findEndpointDelivery, insertReplay } from './sql/deliveries.ts';
import { parseEndpointUrl, privateTargetsAllowed, resolveDeliveryTarget, UnsafeWebhookUrlError } from './url-guard.ts';
import { emitTestEvent } from './events.ts';
import { attemptDelivery } from './delivery.ts';
import { findPage, type Page } from '../../db/paging.ts';

export type WebhookServiceDeps = Pick<AppDeps, 'db' | 'config' | 'secrets'>;

export function toEndpointDto(row: WebhookEndpointRecord): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    consecutiveFailures: row.consecutiveFailures,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

export function toDeliveryDto(row: WebhookDeliveryRecord): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpointId,
    eventId: row.eventId,
    event: row.eventType,
    payload: row.payload as WebhookPayload,
    status: row.status,
    statusCode: row.statusCode,
    responseBody: row.responseBody,
    error: row.error,
    attempt: row.attempt,
    deliveredAt: row.deliveredAt?.toISOString() ?? null,
    nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null,
    replayOf: row.replayOf,
    createdAt: row.createdAt.toISOString(),
  };
}

/** Checks the URL the way deliveries will: in production, https and public addresses only. */
async function checkEndpointUrl(raw: string, config: Config): Promise<string> {
  try {
    const url = parseEndpointUrl(raw, config);
    if (!privateTargetsAllowed(config)) await resolveDeliveryTarget(raw, config);
    return url.toString();
  } catch (error) {
    if (error instanceof UnsafeWebhookUrlError) {
      throw new ValidationError(`The webhook URL is not allowed: ${error.message}`, [
        { field: 'url', message: error.message },
      ]);
    }
    throw error;
  }
}

export async function createEndpoint(
  deps: WebhookServiceDeps,
  ctx: TenantContext,
  body: { url: string; events: readonly unknown[]; secret?: string },
): Promise<CreatedWebhookEndpoint> {
  const url = await checkEndpointUrl(body.url, deps.config);
  const secret = body.secret ?? generateWebhookSecret();
  const row = await modelsOf(deps.db.sequelize).WebhookEndpointRecord.create({
    tenantId: ctx.tenantId,
    url,
    // The route's schema already restricted events to known types.
    events: [...new Set(body.events.map(String))],
    secretEncrypted: seal(deps.secrets.encryptionKey, secret),
  });
  return { ...toEndpointDto(row), secret };
}

export async function listEndpoints(
  deps: WebhookServiceDeps,
  ctx: TenantContext,
  query: { page?: number; limit?: number },
): Promise<Page<WebhookEndpoint>> {
  return findPage(
    modelsOf(deps.db.sequelize).WebhookEndpointRecord,
    {
      where: { tenantId: ctx.tenantId },
      order: [
        ['createdAt', 'DESC'],
        ['id', 'ASC'],
      ],
    },
    query,
    (rows) => rows.map(toEndpointDto),
  );
}

async function findEndpoint(deps: WebhookServiceDeps, ctx: TenantContext, id: string): Promise<WebhookEndpointRecord> {
  const row = await modelsOf(deps.db.sequelize).WebhookEndpointRecord.findOne({
    where: { id, tenantId: ctx.tenantId },
  });
  if (!row) throw new NotFoundError('Webhook endpoint');
  return row;
}

export async function deleteEndpoint(
  deps: WebhookServiceDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<void> {
  const row = await findEndpoint(deps, ctx, input.id);
  // Deliveries go with it (ON DELETE CASCADE); their queued jobs then find nothing and finish.
  await row.destroy();
}

/** Switches an endpoint on or off. Switching on clears the failure streak that may have disabled it. */
export async function toggleEndpoint(
  deps: WebhookServiceDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<WebhookEndpoint> {
  const row = await findEndpoint(deps, ctx, input.id);
  if (row.enabled) {
    await row.update({ enabled: false, disabledReason: 'manual', disabledAt: new Date() });
  } else {
    await row.update({ enabled: true, disabledReason: null, disabledAt: null, consecutiveFailures: 0 });
  }
  return toEndpointDto(row);
}

export async function listDeliveries(
  deps: WebhookServiceDeps,
  ctx: TenantContext,
  input: { endpointId: string; page?: number; limit?: number },
): Promise<Page<WebhookDelivery>> {
  const { endpointId, ...query } = input;
  await findEndpoint(deps, ctx, endpointId);
  return findDeliveryPage(deps.db.sequelize, ctx.tenantId, endpointId, query, toDeliveryDto);
}

/**
 * Sends a delivery's payload again as a new delivery (new delivery id, same event id in the body,
 * `replayOf` pointing at the original), delivered by the webhook worker with the usual retries.
 */
export async function replayDelivery(
  deps: WebhookServiceDeps,
  ctx: TenantContext,
  input: { endpointId: string; deliveryId: string },
): Promise<WebhookDelivery> {
  const { endpointId, deliveryId } = input;
  const endpoint = await findEndpoint(deps, ctx, endpointId);
  const original = await findEndpointDelivery(deps.db.sequelize, ctx.tenantId, endpointId, deliveryId);
  if (!original) throw new NotFoundError('Webhook delivery');
  if (!endpoint.enabled) {
    throw new ConflictError(
      'The endpoint is disabled: switch it on (PATCH /webhooks/endpoints/{id}/toggle) before replaying deliveries.',
      'ENDPOINT_DISABLED',
    );
  }
  return toDeliveryDto(await insertReplay(deps.db.sequelize, original));
}

/** Sends a `test` event to the endpoint now (one attempt, no retries) and answers with the result. */
export async function sendTestEvent(
  deps: WebhookServiceDeps,
  ctx: TenantContext,
  input: { endpointId: string },
): Promise<WebhookDelivery> {
  const { endpointId } = input;
  const { sequelize, sql } = deps.db;
  await findEndpoint(deps, ctx, endpointId);
  const { deliveryId } = await sequelize.transaction((transaction) =>
    emitTestEvent(sequelize, { tenantId: ctx.tenantId, endpointId }, transaction),
  );
  await attemptDelivery({ sequelize, sql, config: deps.config, secrets: deps.secrets }, deliveryId);
  const row = await findDelivery(deps.db.sequelize, ctx.tenantId, deliveryId);
  if (!row) throw new NotFoundError('Webhook delivery');
  return toDeliveryDto(row);
}
