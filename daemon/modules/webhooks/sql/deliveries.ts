// The statements on webhook_deliveries that go through its Sequelize model (WebhookDeliveryRecord,
// ../model.ts) — the API's list, replay and test delivery, a row at a time — and the one left for the
// queue's old delivery jobs. The worker's claim, leases and settle are plain SQL beside them
// (delivery-store.ts), the fan-out too (fan-out.ts): this folder is the table's home (test/sql-homes.test.ts).
import type { Sequelize } from 'sequelize';
import type { WebhookDeliveryRecord } from '../model.ts';
import { modelsOf } from '../../models.ts';
import { findPage, type Page } from '../../../db/paging.ts';

/** A page of an endpoint's deliveries, newest first, each mapped by `view`. */
export function findDeliveryPage<T>(
  sequelize: Sequelize,
  tenantId: string,
  endpointId: string,
  query: { page?: number; limit?: number },
  view: (row: WebhookDeliveryRecord) => T,
): Promise<Page<T>> {
  return findPage(
    modelsOf(sequelize).WebhookDeliveryRecord,
    {
      where: { tenantId, endpointId },
      order: [
        ['createdAt', 'DESC'],
        ['id', 'ASC'],
      ],
    },
    query,
    (rows) => rows.map(view),
  );
}

/** Delivery `id` to endpoint `endpointId` of tenant `tenantId`, or null. */
export function findEndpointDelivery(
  sequelize: Sequelize,
  tenantId: string,
  endpointId: string,
  id: string,
): Promise<WebhookDeliveryRecord | null> {
  return modelsOf(sequelize).WebhookDeliveryRecord.findOne({ where: { id, endpointId, tenantId } });
}

/**
 * A new delivery of `original`'s payload (same event id, `replayOf` pointing at it). due_at defaults to
 * now(): the webhook worker picks it up at its next claim.
 */
export function insertReplay(sequelize: Sequelize, original: WebhookDeliveryRecord): Promise<WebhookDeliveryRecord> {
  return modelsOf(sequelize).WebhookDeliveryRecord.create({
    tenantId: original.tenantId,
    endpointId: original.endpointId,
    eventId: original.eventId,
    eventType: original.eventType,
    payload: original.payload,
    replayOf: original.id,
  });
}

/** A delivery of `tenantId`'s by its id (one the caller made and attempted itself: a test event's). */
export function findDelivery(
  sequelize: Sequelize,
  tenantId: string,
  id: string,
): Promise<WebhookDeliveryRecord | null> {
  return modelsOf(sequelize).WebhookDeliveryRecord.findOne({ where: { id, tenantId } });
}

/** A delivery an older daemon queued as a job, made due now (the webhook worker claims it). */
export async function makeQueuedDeliveryDue(sequelize: Sequelize, id: string): Promise<void> {
  await sequelize.query(
    `UPDATE webhook_deliveries SET due_at = now() WHERE id = :id AND status = 'pending' AND due_at IS NULL`,
    { replacements: { id } },
  );
}

/**
 * Deletes at most :batch deliveries matching `where` (retention, run with its replacements), answering
 * their ids. (id, created_at) is the primary key; ctid would not do (it repeats across partitions).
 */
export function deleteExpiredDeliveriesSql(where: string): string {
  return `DELETE FROM webhook_deliveries WHERE (id, created_at) IN (SELECT id, created_at FROM webhook_deliveries WHERE ${where} LIMIT :batch) RETURNING id`;
}
