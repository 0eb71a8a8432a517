// From one outbox event to its deliveries: a row per enabled endpoint of the tenant that subscribes
// to the event type, due at once for the webhook worker (dispatcher.ts), in the caller's transaction.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { WebhookPayload } from '../../../shared/schemas/webhooks.ts';
import { declareBatch, type BatchColumns } from '../../db/batch.ts';

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

/** The columns of a batch of events to fan out (see fanOutEventsSql); payload is buildWebhookPayload's JSON. */
export const FAN_OUT_COLUMNS = [
  { name: 'id', type: 'uuid' },
  { name: 'tenant_id', type: 'uuid' },
  { name: 'type', type: 'text' },
  { name: 'payload', type: 'text' },
  { name: 'max_attempts', type: 'int' },
] as const satisfies BatchColumns;

/**
 * The fan-out of many events in one statement (a batch statement, daemon/db/batch.ts): `events` is
 * `sql.unnest(batch, 'ev', FAN_OUT_COLUMNS' names)`. Inserts one delivery per enabled endpoint of
 * the event's tenant subscribed to its type, due at once (the webhook worker claims it); answers
 * the delivery ids.
 */
export function fanOutEventsSql(events: string): string {
  return `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, payload, max_attempts, due_at)
          SELECT ev.tenant_id, w.id, ev.id, ev.type, CAST(ev.payload AS json), ev.max_attempts, now()
            FROM ${events}
            JOIN webhook_endpoints w ON w.tenant_id = ev.tenant_id AND w.enabled AND ev.type = ANY(w.events)
          RETURNING id`;
}

/** The fan-out on its own, rows by FAN_OUT_COLUMNS (the drain embeds fanOutEventsSql in its record statement). */
export const FAN_OUT_EVENTS = declareBatch('webhooks.fan-out-events', { batches: { events: FAN_OUT_COLUMNS } }, (sql) =>
  fanOutEventsSql(sql.unnest('events', 'ev')),
);

/** Delivery rows for an event inserted with its fanned_out_at already set (events.ts). */
export async function fanOutEvent(
  sequelize: Sequelize,
  event: OutboxEvent,
  transaction: Transaction,
  options: FanOutOptions = {},
): Promise<string[]> {
  const payload = JSON.stringify(buildWebhookPayload(event));
  // One NOTIFY per transaction whatever the row count: PostgreSQL folds identical ones.
  const deliveries = await sequelize.query<{ id: string }>(
    `WITH inserted AS (
       INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, payload, max_attempts, due_at)
       SELECT tenant_id, id, :eventId, :type, CAST(:payload AS json), :maxAttempts, CASE WHEN :due THEN now() END
         FROM webhook_endpoints
        WHERE ${targetEndpointsWhere(options.onlyEndpointId)}
       RETURNING id
     )
     SELECT id, CASE WHEN :due THEN pg_notify('${DELIVERIES_CHANNEL}', '')::text END AS notified FROM inserted`,
    {
      replacements: {
        eventId: event.id,
        type: event.type,
        payload,
        tenantId: event.tenantId,
        endpointId: options.onlyEndpointId ?? null,
        maxAttempts: options.maxAttempts ?? WEBHOOK_MAX_ATTEMPTS,
        due: options.enqueue !== false,
      },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return deliveries.map((delivery) => delivery.id);
}
