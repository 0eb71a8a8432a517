// From one outbox event to its deliveries: a row per enabled endpoint of the tenant that subscribes
// to the event type, each with a job in the 'webhook' queue, all in the caller's transaction.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { enqueueJob } from '../../queue/enqueue.ts';
import type { WebhookPayload } from '../../../shared/schemas/webhooks.ts';

export const WEBHOOK_MAX_ATTEMPTS = 5;
/**
 * The queue counts every run of a webhook job, including the quick "endpoint busy, come back" runs
 * of the per-endpoint concurrency limit; the real attempts are counted on the delivery row
 * (WEBHOOK_MAX_ATTEMPTS). This is only a backstop against a job that never settles.
 */
export const WEBHOOK_JOB_MAX_RUNS = 10_000;

export interface OutboxEvent {
  id: string;
  tenantId: string;
  type: string;
  createdAt: Date;
  data: Record<string, unknown>;
}

export function buildWebhookPayload(event: OutboxEvent): WebhookPayload {
  return { id: event.id, type: event.type, createdAt: event.createdAt.toISOString(), tenantId: event.tenantId, data: event.data };
}

/** Queues one delivery. Keyed by the delivery id, so a delivery never has two waiting jobs. */
export async function enqueueDelivery(
  sequelize: Sequelize,
  delivery: { id: string; tenantId: string },
  transaction?: Transaction,
): Promise<void> {
  await enqueueJob(
    sequelize,
    { queue: 'webhook', tenantId: delivery.tenantId, payload: { deliveryId: delivery.id }, key: `delivery:${delivery.id}`, maxAttempts: WEBHOOK_JOB_MAX_RUNS },
    transaction,
  );
}

export interface FanOutOptions {
  /** Deliver to this endpoint only, subscribed or not (test events). */
  onlyEndpointId?: string;
  /** False: create the delivery rows but queue nothing (the caller attempts them itself). */
  enqueue?: boolean;
  maxAttempts?: number;
}

/** SQL condition on webhook_endpoints for the endpoints an event goes to (replacements :tenantId, :type, :endpointId). */
export function targetEndpointsWhere(onlyEndpointId?: string): string {
  return `tenant_id = :tenantId AND ${onlyEndpointId ? 'id = :endpointId' : 'enabled AND :type = ANY(events)'}`;
}

/** Delivery rows (and jobs) for an event inserted with its fanned_out_at already set (events.ts). */
export async function fanOutEvent(sequelize: Sequelize, event: OutboxEvent, transaction: Transaction, options: FanOutOptions = {}): Promise<string[]> {
  const payload = JSON.stringify(buildWebhookPayload(event));
  const deliveries = await sequelize.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, payload, max_attempts)
     SELECT tenant_id, id, :eventId, :type, CAST(:payload AS json), :maxAttempts
       FROM webhook_endpoints
      WHERE ${targetEndpointsWhere(options.onlyEndpointId)}
     RETURNING id`,
    {
      replacements: {
        eventId: event.id,
        type: event.type,
        payload,
        tenantId: event.tenantId,
        endpointId: options.onlyEndpointId ?? null,
        maxAttempts: options.maxAttempts ?? WEBHOOK_MAX_ATTEMPTS,
      },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  if (options.enqueue !== false) {
    for (const delivery of deliveries) await enqueueDelivery(sequelize, { id: delivery.id, tenantId: event.tenantId }, transaction);
  }
  return deliveries.map((delivery) => delivery.id);
}
