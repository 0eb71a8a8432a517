// From one outbox event to its deliveries: a row per enabled endpoint of the tenant that subscribes
// to the event type, due at once for the webhook worker (dispatcher.ts), in the caller's transaction.
// What a delivery carries and who gets it is here; the statements that write the rows are the table's
// home's (sql/fan-out.ts).
import type { WebhookPayload } from '../../../shared/schemas/webhooks.ts';

export const WEBHOOK_MAX_ATTEMPTS = 5;

/**
 * Notified (at commit) when deliveries due now were written, so the webhook worker claims them at once
 * instead of at its next poll (up to 250 ms later: most of an event's lag, docs/webhook-delivery.md).
 */
export const DELIVERIES_CHANNEL = 'svc_webhook_deliveries';

export interface OutboxEvent {
  id: string;
  tenantId: string;
  type: string;
  createdAt: Date;
  data: Record<string, unknown>;
}

/** The body every endpoint receives: the event's id and createdAt let receivers dedupe and order. */
export function buildWebhookPayload(event: OutboxEvent): WebhookPayload {
  return {
    id: event.id,
    type: event.type,
    createdAt: event.createdAt.toISOString(),
    tenantId: event.tenantId,
    data: event.data,
  };
}

export interface FanOutOptions {
  /** Deliver to this endpoint only, subscribed or not (test events). */
  onlyEndpointId?: string;
  /** False: create the delivery rows with no due time (the caller attempts them itself). */
  enqueue?: boolean;
  maxAttempts?: number;
}

/** SQL condition on webhook_endpoints for the endpoints an event goes to (replacements :tenantId, :type, :endpointId). */
export function targetEndpointsWhere(onlyEndpointId?: string): string {
  return `tenant_id = :tenantId AND ${onlyEndpointId ? 'id = :endpointId' : 'enabled AND :type = ANY(events)'}`;
}
