// What happens to a message after it left: the log's timeline, the webhook event, suppressions
// and the sending-risk check (sending-risk.ts: warning, pause). The send worker and the provider
// receivers (inbound area) both record outcomes here, so every path counts the same way.
import type { DeliveryOutcome } from '../../mail/delivery-outcome.ts';
import { randomUUID } from 'node:crypto';
import type { Sequelize, Transaction } from 'sequelize';
import type { EmailStatus, EventType } from '../../../shared/constants.ts';
import type { OutcomeEvent, TimelineRow } from './drain.ts';
import {
  NO_JOBS,
  RECORD_OUTCOMES,
  recordOutcomesValues,
  UNCHANGED_LOG_FIELDS,
  type LogOutcome,
} from './sql/record-outcomes.ts';
import { lockOutcomeLogs, type OutcomeLogRow } from './sql/lookups.ts';
import { APPLY_SPOOLED_LOGS } from './sql/spooled-log.ts';
import { claimRecipientOutcomes, failedRecipients, type RecipientOutcomeKind } from './sql/recipient-outcomes.ts';
import { sequelizeStatements, type TransactionStatements } from '../../db/sql.ts';
import { emitEvent } from '../webhooks/events.ts';
import { buildWebhookPayload, WEBHOOK_MAX_ATTEMPTS } from '../webhooks/fan-out.ts';
import { suppressAddress } from '../suppressions/sql/suppressions.ts';
import type { SystemMailDeps } from '../../mail/system-mail.ts';
import type { EmailLog } from './model.ts';
import { lockLogForOutcome, writeOutcomeStatus } from './sql/log-records.ts';
import { evaluateSendingRisk } from './sending-risk.ts';
import { bareAddress } from '../../mail/mailboxes.ts';
import { countDeliveryOutcome, DeliverabilityTally } from '../deliverability/tally.ts';
import { flushDeliverability } from '../deliverability/sql.ts';

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
 * recordEmailOutcomeEvent's rows as data, for the drain's batch statement (daemon/modules/emails/drain.ts):
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

/** What recording did: whether the log exists, and the recipients this outcome was new for. */
export interface RecordedOutcome {
  found: boolean;
  /** Recipients newly recorded (a replayed report: none, and nothing else changed). */
  applied: string[];
}

export type OutcomeDeps = SystemMailDeps;

const STATUS_OF = { delivered: 'DELIVERED', bounced: 'BOUNCED', complained: 'COMPLAINED' } as const;
const EVENT_OF = { delivered: 'email.delivered', bounced: 'email.bounced', complained: 'email.complained' } as const;
/** The row of recipient_outcomes an outcome leaves (RecipientOutcomeKind says how each counts). */
function recipientOutcomeKind(outcome: DeliveryOutcome): RecipientOutcomeKind {
  if (outcome.type === 'complained') return 'complaint';
  switch (outcome.bounceType ?? 'hard') {
    case 'hard':
    case 'policy':
      return 'hard_bounce';
    case 'soft':
      return outcome.final ? 'undelivered' : 'soft_bounce';
  }
}

/** Every recipient of a log, bare and lower-case: To, Cc and Bcc. */
export function logRecipients(log: Pick<EmailLog, 'toAddresses' | 'ccAddresses' | 'bccAddresses'>): string[] {
  return [...new Set([...log.toAddresses, ...(log.ccAddresses ?? []), ...(log.bccAddresses ?? [])].map(bareAddress))];
}

/**
 * The send's status after a hard bounce or complaint: BOUNCED or COMPLAINED only once every
 * recipient has bounced or complained (COMPLAINED when any complained). Before that the message
 * reached the others, so the send keeps its status; the timeline and events name who bounced.
 */
async function statusAfterFailures(
  sequelize: Sequelize,
  log: EmailLog,
  transaction: Transaction,
): Promise<'BOUNCED' | 'COMPLAINED' | null> {
  const rows = await failedRecipients(sequelize, log.id, transaction);
  const failed = new Set(rows.map((row) => row.recipient));
  if (!logRecipients(log).every((recipient) => failed.has(recipient))) return null;
  return rows.some((row) => row.kind === 'complaint') ? 'COMPLAINED' : 'BOUNCED';
}

/**
 * The send's status after a delivery report, or null to leave it: a later, weaker report (delivered
 * after a bounce or complaint) does not overwrite a stronger one, and a second delivery changes nothing.
 * The one rule of both paths (one outcome, and the MTA's batches).
 */
export function statusAfterDelivery(current: string): 'DELIVERED' | null {
  return current === 'BOUNCED' || current === 'COMPLAINED' || current === 'DELIVERED' ? null : 'DELIVERED';
}

/**
 * Records what a relay or provider reported about a sent message: status, timeline, event,
 * suppression (hard bounce, complaint) and the sending-risk check. Each (send, recipient) counts once:
 * a bounce or complaint already recorded for a recipient adds nothing. Called by the send worker
 * and by the provider receivers (inbound/service.ts).
 */
export async function recordDeliveryOutcome(
  deps: OutcomeDeps,
  outcome: DeliveryOutcome,
  transaction?: Transaction,
  /** The batch's deliverability tally, written by the caller (the MTA loop); absent: written here. */
  tally?: DeliverabilityTally,
): Promise<RecordedOutcome> {
  const { sequelize } = deps;
  const work = async (tx: Transaction): Promise<RecordedOutcome> => {
    const log = await lockLogForOutcome(sequelize, outcome.tenantId, outcome.emailId, tx);
    if (!log) return { found: false, applied: [] };
    const named = outcome.recipients?.map(bareAddress) ?? logRecipients(log);
    let recipients = named;
    let status: EmailStatus | null = STATUS_OF[outcome.type];
    if (outcome.type === 'delivered') {
      status = statusAfterDelivery(log.status);
    } else {
      const kind = recipientOutcomeKind(outcome);
      recipients = await claimRecipientOutcomes(
        sequelize,
        { tenantId: log.tenantId, emailId: log.id },
        kind,
        [...new Set(named)],
        tx,
      );
      if (recipients.length === 0) return { found: true, applied: [] };
      // A soft bounce (4.x.x: the receiver may still take it) is a timeline note, not the send's state.
      status = kind === 'soft_bounce' ? null : await statusAfterFailures(sequelize, log, tx);
    }
    if (status) await writeOutcomeStatus(log, status, outcome.diagnostic ?? log.error, tx);
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
            email: recipient,
            reason: outcome.type === 'complained' ? 'complaint' : 'bounce',
            emailId: log.id,
            detail: outcome.diagnostic ?? null,
          },
          tx,
        );
      }
    }
    // A policy refusal suppresses nobody but counts toward the pause, as a hard bounce does.
    if (suppress || outcome.bounceType === 'policy') await evaluateSendingRisk(deps, outcome.tenantId, tx);
    // Last in the transaction: the counter rows are locked for the shortest time (deliverability/tally.ts).
    const counts = tally ?? new DeliverabilityTally();
    countDeliveryOutcome(counts, outcome, recipients);
    if (!tally) await flushDeliverability(sequelizeStatements(sequelize, tx), counts);
    return { found: true, applied: recipients };
  };
  return transaction ? work(transaction) : sequelize.transaction(work);
}

/**
 * Records a batch of outcomes in the caller's transaction, as recordDeliveryOutcome would one by one,
 * with `timeline` rows of the caller's (the MTA's deferrals) beside them. Deliveries — nearly all of
 * what the outbound MTA records — go in two statements for the whole batch: their logs locked and
 * read together, then one RECORD_OUTCOMES with the statuses, timeline rows, events and webhook fan-out
 * (four statements per delivery held the MTA's commits, docs/mta.md "Performance"). Bounces and
 * complaints, which claim recipients, suppress and may pause the tenant, go one by one after them.
 */
export async function recordDeliveryOutcomes(
  deps: OutcomeDeps,
  input: {
    outcomes: DeliveryOutcome[];
    timeline: TimelineRow[];
    /** The logs the outbound MTA attempted, each with a spool row keeping its fields (spooled-log.ts). */
    spooled?: Map<string, string>;
    workerId: string;
  },
  /** The caller's transaction, its declared statements (Sql.inTransaction), and the batch's tally. */
  within: { transaction: Transaction; run: TransactionStatements; tally: DeliverabilityTally },
): Promise<void> {
  const { transaction, run, tally } = within;
  const delivered = input.outcomes.filter((outcome) => outcome.type === 'delivered');
  const logs = new Map<string, OutcomeLogRow>();
  for (const row of await lockOutcomeLogs(run, delivered)) logs.set(row.id, row);
  const statuses = new Map<string, LogOutcome>();
  const timeline: TimelineRow[] = [];
  const events: OutcomeEvent[] = [];
  for (const outcome of delivered) {
    const row = logs.get(outcome.emailId);
    if (!row || row.tenant_id !== outcome.tenantId) continue;
    const log = eventLogOfRow(row);
    const recipients = outcome.recipients?.map(bareAddress) ?? logRecipients(log);
    if (statusAfterDelivery(row.status)) statuses.set(row.id, deliveredStatus(row, input.spooled?.get(row.id)));
    const rows = outcomeEventRows(log, EVENT_OF.delivered, { recipients });
    timeline.push(rows.timeline);
    events.push(rows.event);
    countDeliveryOutcome(tally, outcome, recipients);
  }
  // The caller's rows after the deliveries, as one by one recorded them.
  timeline.push(...input.timeline);
  // An attempt that delivered nothing (deferred; bounced or expired, written one by one below) still
  // writes what its spool row keeps for the log: SENDING, the headers sent, the attempt. (A log with a
  // delivery in this batch is past that already: DELIVERED above, or a status a delivery keeps.)
  const deliveredLogs = new Set(delivered.map((outcome) => outcome.emailId));
  const undelivered = [...(input.spooled ?? [])].filter(([emailId]) => !deliveredLogs.has(emailId));
  if (undelivered.length > 0) await run(APPLY_SPOOLED_LOGS, [undelivered.map(([, spoolId]) => spoolId)]);
  if (timeline.length > 0 || statuses.size > 0) {
    const outcomes = { ...NO_JOBS, logs: [...statuses.values()], timeline, events };
    await run(RECORD_OUTCOMES.statement, recordOutcomesValues(input.workerId, outcomes));
  }
  for (const outcome of input.outcomes)
    if (outcome.type !== 'delivered') await recordDeliveryOutcome(deps, outcome, transaction, tally);
}

function eventLogOfRow(row: OutcomeLogRow): EventLog & Pick<EmailLog, 'ccAddresses' | 'bccAddresses'> {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    messageId: row.message_id,
    toAddresses: row.to_addresses,
    ccAddresses: row.cc_addresses ?? [],
    bccAddresses: row.bcc_addresses ?? [],
    subject: row.subject,
    tags: row.tags,
    metadata: row.metadata,
  };
}

/**
 * A log's status change to DELIVERED through RECORD_OUTCOMES: nothing else of the log changes but what
 * spool row `spoolId` keeps for it, where not written yet.
 */
function deliveredStatus(row: OutcomeLogRow, spoolId: string | undefined): LogOutcome {
  return {
    emailId: row.id,
    createdAt: row.created_at,
    status: 'DELIVERED',
    error: row.error,
    ...UNCHANGED_LOG_FIELDS,
    spoolId: spoolId ?? null,
  };
}
