// The body an inbound.received event was delivered with (POST /inbound/messages/{id}/replay, issue 52):
// an inbound message's body, inline attachments included, is stored once, as its delivery's payload
// (the event row keeps it without them: events.ts emitEventToEndpoint). Any delivery of the event holds
// it (a webhooks replay copies the payload); found by the partial index webhook_deliveries_inbound_event_idx
// (migration 0478), whose predicate the event type written in the statement matches.
import type { Sequelize } from 'sequelize';
import { declare, sequelizeRows } from '../../../db/sql.ts';

const INBOUND_EVENT_DATA = declare(
  'webhook_deliveries_inbound_event_data',
  `SELECT payload -> 'data' AS data FROM webhook_deliveries
    WHERE event_id = $2 AND event_type = 'inbound.received' AND tenant_id = $1
    LIMIT 1`,
);

/** The `data` of the body delivered for the event, while the delivery log keeps one of its deliveries; else null. */
export async function inboundEventBodyData(
  sequelize: Sequelize,
  tenantId: string,
  eventId: string,
): Promise<Record<string, unknown> | null> {
  const [row] = await sequelizeRows<{ data: Record<string, unknown> | null }>(sequelize, INBOUND_EVENT_DATA, [
    tenantId,
    eventId,
  ]);
  return row?.data ?? null;
}
