// emitEvent: the one way to record an event. Call it inside the transaction of the state change
// that caused it, so that the change and its event commit (or roll back) together.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { EventType } from '../../../shared/constants.ts';

export interface EmittedEvent {
  tenantId: string;
  type: EventType | 'test';
  /** The email log this event is about, when there is one (feeds the log's timeline). */
  emailId?: string | null;
  data: Record<string, unknown>;
}

export async function emitEvent(sequelize: Sequelize, event: EmittedEvent, transaction?: Transaction): Promise<string> {
  const rows = await sequelize.query<{ id: string }>(
    `INSERT INTO events (tenant_id, type, email_id, data) VALUES (:tenantId, :type, :emailId, CAST(:data AS jsonb)) RETURNING id`,
    {
      replacements: { tenantId: event.tenantId, type: event.type, emailId: event.emailId ?? null, data: JSON.stringify(event.data) },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows[0].id;
}
