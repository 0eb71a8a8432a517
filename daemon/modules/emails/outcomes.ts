// What happens to a message after it left: the log's timeline, the webhook event, suppressions
// and the automatic sending pause. The send worker and the provider receivers (webhooks area)
// both record outcomes here, so every path counts toward the pause the same way.
import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { EventType } from '../../../shared/constants.ts';
import type { OutcomeEvent, TimelineRow } from '../../queue/sends.ts';
import { emitEvent } from '../webhooks/events.ts';
import { buildWebhookPayload, WEBHOOK_MAX_ATTEMPTS } from '../webhooks/fan-out.ts';
import { suppressAddress } from '../suppressions/service.ts';
import { EmailLog } from './model.ts';

/** Sends looked at for the pause, newest first. */
export const PAUSE_WINDOW_SENDS = 500;
export const PAUSE_BOUNCE_RATE = 0.05;
export const PAUSE_COMPLAINT_RATE = 0.001;
/** Fewer sends than this are too few to judge a rate by (one bounce in three sends is not 33 %). */
export const PAUSE_MIN_SENDS = 20;

/** One timeline row of a log. */
export async function recordEmailEvent(
  sequelize: Sequelize,
  entry: { tenantId: string; emailId: string; type: string; data?: Record<string, unknown> },
  transaction?: Transaction,
): Promise<void> {
  await sequelize.query(
    `INSERT INTO email_events (tenant_id, email_id, type, data) VALUES (:tenantId, :emailId, :type, CAST(:data AS jsonb))`,
    { replacements: { ...entry, data: JSON.stringify(entry.data ?? {}) }, transaction },
  );
}

/** What an email event says about its log. */
export type EventLog = Pick<EmailLog, 'id' | 'tenantId' | 'messageId' | 'toAddresses' | 'subject' | 'tags'> & {
  metadata?: Record<string, unknown> | null;
};

/** The webhook payload data of an email event (CONTRACT.md: emailId, messageId, to, subject, tags, metadata + fields). */
export function emailEventData(log: EventLog, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    emailId: log.id,
    messageId: log.messageId,
    to: log.toAddresses,
    subject: log.subject,
    tags: log.tags,
    metadata: log.metadata,
    ...extra,
  };
}

/**
 * recordEmailOutcomeEvent's rows as data, for the drain's batch statement (daemon/queue/sends.ts):
 * the timeline row and the event with the payload its webhook endpoints receive. The event's id and
 * time are fixed here so that the payload carries the very values the events row stores.
 */
export function outcomeEventRows(
  log: EventLog,
  type: EventType,
  extra: Record<string, unknown>,
): { timeline: TimelineRow; event: OutcomeEvent } {
  const id = randomUUID();
  const createdAt = new Date();
  const data = emailEventData(log, extra);
  return {
    timeline: { tenantId: log.tenantId, emailId: log.id, type: type.replace(/^email\./, ''), data: extra },
    event: {
      id,
      tenantId: log.tenantId,
      type,
      emailId: log.id,
      data,
      createdAt,
      payload: JSON.stringify(buildWebhookPayload({ id, tenantId: log.tenantId, type, createdAt, data })),
      maxAttempts: WEBHOOK_MAX_ATTEMPTS,
    },
  };
}

/** Timeline row + outbox event for a log, in the caller's transaction. */
export async function recordEmailOutcomeEvent(
  sequelize: Sequelize,
  log: EmailLog,
  type: EventType,
  extra: Record<string, unknown>,
  transaction?: Transaction,
): Promise<void> {
  await recordEmailEvent(
    sequelize,
    { tenantId: log.tenantId, emailId: log.id, type: type.replace(/^email\./, ''), data: extra },
    transaction,
  );
  await emitEvent(
    sequelize,
    { tenantId: log.tenantId, type, emailId: log.id, data: emailEventData(log, extra) },
    transaction,
  );
}

export interface DeliveryOutcome {
  tenantId: string;
  emailId: string;
  type: 'delivered' | 'bounced' | 'complained';
  /**
   * hard bounces (and complaints) suppress the recipient; soft and policy (refused for the sender's
   * sake: spam, reputation, DMARC — the outbound MTA's mta/outcome.ts) bounces do not.
   */
  bounceType?: 'hard' | 'soft' | 'policy';
  /** A soft bounce that ends the send (direct delivery: mailbox full, or expired) rather than a timeline note. */
  final?: boolean;
  /** The recipient concerned; defaults to every recipient of the log. */
  recipients?: string[];
  diagnostic?: string | null;
}

const STATUS_OF = { delivered: 'DELIVERED', bounced: 'BOUNCED', complained: 'COMPLAINED' } as const;
const EVENT_OF = { delivered: 'email.delivered', bounced: 'email.bounced', complained: 'email.complained' } as const;

/**
 * Records what a relay or provider reported about a sent message: status, timeline, event,
 * suppression (hard bounce, complaint) and the pause check. Returns false for an unknown log.
 * Called by the send worker and by the webhooks area's provider receivers.
 */
export async function recordDeliveryOutcome(
  sequelize: Sequelize,
  outcome: DeliveryOutcome,
  transaction?: Transaction,
): Promise<boolean> {
  const work = async (tx: Transaction) => {
    const log = await EmailLog.findOne({
      where: { id: outcome.emailId, tenantId: outcome.tenantId },
      transaction: tx,
      lock: tx.LOCK.UPDATE,
    });
    if (!log) return false;
    // A later, weaker report (delivered after a bounce) does not overwrite a stronger one, and a soft
    // bounce (4.x.x: the receiver may still take it) is a timeline note, not the send's final state.
    const keep =
      (outcome.type === 'delivered' && (log.status === 'BOUNCED' || log.status === 'COMPLAINED')) ||
      (outcome.type === 'bounced' && outcome.bounceType === 'soft' && !outcome.final);
    if (!keep)
      await log.update(
        { status: STATUS_OF[outcome.type], error: outcome.diagnostic ?? log.error },
        { transaction: tx },
      );
    const recipients = outcome.recipients ?? log.toAddresses;
    await recordEmailOutcomeEvent(
      sequelize,
      log,
      EVENT_OF[outcome.type],
      {
        ...(outcome.bounceType ? { bounceType: outcome.bounceType } : {}),
        recipients,
        ...(outcome.diagnostic ? { diagnostic: outcome.diagnostic } : {}),
      },
      tx,
    );
    const suppress =
      outcome.type === 'complained' ||
      (outcome.type === 'bounced' && outcome.bounceType !== 'soft' && outcome.bounceType !== 'policy');
    if (suppress) {
      for (const recipient of recipients) {
        await suppressAddress(
          sequelize,
          {
            tenantId: outcome.tenantId,
            email: recipient.replace(/^.*<([^>]+)>.*$/, '$1'),
            reason: outcome.type === 'complained' ? 'complaint' : 'bounce',
            emailId: log.id,
            detail: outcome.diagnostic ?? null,
          },
          tx,
        );
      }
    }
    if (outcome.type !== 'delivered') await evaluateSendingPause(sequelize, outcome.tenantId, tx);
    return true;
  };
  return transaction ? work(transaction) : sequelize.transaction(work);
}

/**
 * Pauses the tenant's sending when, over its last 500 live sends, bounces pass 5 % or complaints
 * pass 0.1 % (at least PAUSE_MIN_SENDS sends). Returns true when sending is (now) paused.
 */
export async function evaluateSendingPause(
  sequelize: Sequelize,
  tenantId: string,
  transaction?: Transaction,
): Promise<boolean> {
  const [stats] = await sequelize.query<{ total: number; bounced: number; complained: number }>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE status = 'BOUNCED')::int AS bounced,
            count(*) FILTER (WHERE status = 'COMPLAINED')::int AS complained
       FROM (SELECT status FROM email_logs
              WHERE tenant_id = :tenantId AND test_mode = false AND status NOT IN ('QUEUED', 'SENDING', 'SUPPRESSED')
              ORDER BY created_at DESC LIMIT :window) recent`,
    { replacements: { tenantId, window: PAUSE_WINDOW_SENDS }, type: QueryTypes.SELECT, transaction },
  );
  if (!stats || stats.total < PAUSE_MIN_SENDS) return false;
  const bounceRate = stats.bounced / stats.total;
  const complaintRate = stats.complained / stats.total;
  let reason: string | null = null;
  if (bounceRate > PAUSE_BOUNCE_RATE)
    reason = `bounce rate ${(bounceRate * 100).toFixed(1)} % over the last ${stats.total} sends is above 5 %`;
  else if (complaintRate > PAUSE_COMPLAINT_RATE)
    reason = `complaint rate ${(complaintRate * 100).toFixed(2)} % over the last ${stats.total} sends is above 0.1 %`;
  if (!reason) return false;
  await sequelize.query(
    `UPDATE tenants SET sending_paused_at = now(), sending_paused_reason = :reason, updated_at = now() WHERE id = :tenantId AND sending_paused_at IS NULL`,
    { replacements: { tenantId, reason }, transaction },
  );
  return true;
}
