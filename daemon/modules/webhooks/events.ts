// emitEvent: the one way to record an event. Call it inside the transaction of the state change
// that caused it, so that the change and its event commit (or roll back) together.
//
// Fan-out happens here too, in that same transaction: the event row, one delivery row per enabled
// endpoint subscribed to its type (due at once for the webhook worker) commit together (or not at
// all). We chose this over a worker sweeping `events WHERE fanned_out_at IS NULL` because nothing
// then sits between "committed" and "queued": no sweep latency, no window where a crash or an
// endpoint toggled in between changes who hears about an event, and no second writer of deliveries.
// The price is one indexed look-up on webhook_endpoints per event, inside the caller's transaction:
// it rides on the event's INSERT (and fanned_out_at is set there, the fan-out being in the same
// transaction), so an event nobody listens to costs one statement; the deliveries are a second.
import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { EventType } from '../../../shared/constants.ts';
import { targetEndpointsWhere, type OutboxEvent } from './fan-out.ts';
import { fanOutEvent, insertEventToEndpoint } from './sql/fan-out.ts';

export interface EmittedEvent {
  tenantId: string;
  type: EventType | 'test';
  /** The email log this event is about, when there is one (feeds the log's timeline). */
  emailId?: string | null;
  data: Record<string, unknown>;
}

interface RecordedEvent {
  event: OutboxEvent;
  /** Some endpoint will receive it: the fan-out has rows to write. */
  hasTargets: boolean;
}

async function insertEvent(
  sequelize: Sequelize,
  event: EmittedEvent,
  transaction: Transaction,
  onlyEndpointId?: string,
): Promise<RecordedEvent> {
  const rows = await sequelize.query<{ id: string; created_at: Date | string; has_targets: boolean }>(
    `WITH inserted AS (
       INSERT INTO events (tenant_id, type, email_id, data, fanned_out_at)
       VALUES (:tenantId, :type, :emailId, CAST(:data AS jsonb), now())
       RETURNING id, created_at
     )
     SELECT id, created_at, EXISTS (SELECT 1 FROM webhook_endpoints WHERE ${targetEndpointsWhere(onlyEndpointId)}) AS has_targets FROM inserted`,
    {
      replacements: {
        tenantId: event.tenantId,
        type: event.type,
        emailId: event.emailId ?? null,
        data: JSON.stringify(event.data),
        endpointId: onlyEndpointId ?? null,
      },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return {
    event: {
      id: rows[0].id,
      tenantId: event.tenantId,
      type: event.type,
      createdAt: new Date(rows[0].created_at),
      data: event.data,
    },
    hasTargets: rows[0].has_targets,
  };
}

export async function emitEvent(sequelize: Sequelize, event: EmittedEvent, transaction?: Transaction): Promise<string> {
  if (!transaction) return sequelize.transaction((own) => emitEvent(sequelize, event, own));
  const recorded = await insertEvent(sequelize, event, transaction);
  if (recorded.hasTargets) await fanOutEvent(sequelize, recorded.event, transaction);
  return recorded.event.id;
}

/**
 * An event for one endpoint of the tenant, due at once, in the caller's transaction: an inbound
 * route's message goes to the route's endpoint only, not to every endpoint subscribed to its type
 * (modules/inbound-routing/receive.ts). Answers the event id; no delivery when the endpoint is gone.
 * One statement, the body sent once (sql/fan-out.ts insertEventToEndpoint); the id and time are chosen here.
 * `recorded`, when given, is what the event row keeps as its data instead of the body's: an inbound
 * message's inline attachments are then stored once, in the delivery's payload, which is what every
 * attempt, the delivery log and a replay send (the event row holding them too cost PostgreSQL a second
 * ~50 KB jsonb a message, issue 52 §5).
 */
export async function emitEventToEndpoint(
  sequelize: Sequelize,
  event: EmittedEvent & { recorded?: Record<string, unknown> },
  endpointId: string,
  transaction: Transaction,
): Promise<string> {
  const id = randomUUID();
  await insertEventToEndpoint(
    sequelize,
    {
      id,
      tenantId: event.tenantId,
      type: event.type,
      emailId: event.emailId ?? null,
      createdAt: new Date(),
      data: event.data,
      recorded: event.recorded ?? null,
    },
    endpointId,
    transaction,
  );
  return id;
}

/**
 * A `test` event for one endpoint, whatever it subscribes to. Its delivery is not queued: the caller
 * makes the single attempt itself and reports the result.
 */
export async function emitTestEvent(
  sequelize: Sequelize,
  target: { tenantId: string; endpointId: string },
  transaction: Transaction,
): Promise<{ eventId: string; deliveryId: string }> {
  const recorded = await insertEvent(
    sequelize,
    {
      tenantId: target.tenantId,
      type: 'test',
      data: { message: 'This is a test event sent from the webhooks API.', endpointId: target.endpointId },
    },
    transaction,
    target.endpointId,
  );
  const [deliveryId] = await fanOutEvent(sequelize, recorded.event, transaction, {
    onlyEndpointId: target.endpointId,
    enqueue: false,
    maxAttempts: 1,
  });
  return { eventId: recorded.event.id, deliveryId };
}
