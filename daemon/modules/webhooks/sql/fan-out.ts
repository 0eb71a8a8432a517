// The statements of the fan-out (../fan-out.ts says what it is): webhook_deliveries' rows for an event,
// one per endpoint it goes to — alone (fanOutEvent) or for a batch of events in one statement
// (fanOutEventsSql, embedded in the drain's record statement, emails/sql/record-outcomes.ts).
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { declareBatch, type BatchColumns } from '../../../db/batch.ts';
import { declare, sequelizeRows } from '../../../db/sql.ts';
import {
  buildWebhookPayload,
  DELIVERIES_CHANNEL,
  targetEndpointsWhere,
  WEBHOOK_MAX_ATTEMPTS,
  type FanOutOptions,
  type OutboxEvent,
} from '../fan-out.ts';

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

/**
 * An event and its one delivery to `endpoint_id` (if that endpoint is the tenant's), in one statement:
 * the webhook body ($5, buildWebhookPayload's JSON, the event's id and createdAt chosen by the caller)
 * is sent once and is both the delivery's payload, kept as sent (json), and the event's data (its
 * `data` member, jsonb). Cast from text so that the json copy is not jsonb's rewrite. An inbound
 * message's event carries its attachments inline (tens of KB): written as two replacements-escaped
 * statements it cost the event loop and PostgreSQL twice the text to escape, send and parse (issue 52 §5).
 * $9, when not null, is what the event row keeps instead of the body's data: an inbound message's body
 * is then stored once, in the delivery (events.ts emitEventToEndpoint's `recorded`).
 */
const EMIT_TO_ENDPOINT = declare(
  'webhooks.emit-to-endpoint',
  `WITH ev AS (
     INSERT INTO events (id, tenant_id, type, email_id, data, fanned_out_at, created_at)
     VALUES ($1, $2, $3, $4, COALESCE($9::text::jsonb, ($5::text::jsonb) -> 'data'), now(), $6)
     RETURNING id, tenant_id, type
   ), inserted AS (
     INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, payload, max_attempts, due_at)
     SELECT ev.tenant_id, w.id, ev.id, ev.type, $5::text::json, $7, now()
       FROM ev JOIN webhook_endpoints w ON w.tenant_id = ev.tenant_id AND w.id = $8
     RETURNING id
   )
   SELECT (SELECT pg_notify('${DELIVERIES_CHANNEL}', '')::text FROM inserted LIMIT 1) AS notified`,
);

export async function insertEventToEndpoint(
  sequelize: Sequelize,
  event: OutboxEvent & { emailId: string | null; recorded: Record<string, unknown> | null },
  endpointId: string,
  transaction: Transaction,
): Promise<void> {
  await sequelizeRows(
    sequelize,
    EMIT_TO_ENDPOINT,
    [
      event.id,
      event.tenantId,
      event.type,
      event.emailId,
      JSON.stringify(buildWebhookPayload(event)),
      event.createdAt,
      WEBHOOK_MAX_ATTEMPTS,
      endpointId,
      event.recorded && JSON.stringify(event.recorded),
    ],
    transaction,
  );
}
