// Recording what a batch of delivery attempts did, in ONE statement (the drain, daemon/modules/emails/drain.ts):
// the logs' status, their timeline rows, the events with their webhook fan-out (webhooks/sql/fan-out.ts),
// and the jobs (the queue's settle CTEs, daemon/queue/sql/settle.ts: deleted, retried or moved to
// failed_jobs — only those the worker still holds). A batch statement (daemon/db/batch.ts): each
// batch is named with its columns, so adding a column is one entry below and its use in the text.
//
// A log is found on its whole key, id and created_at, row by row: the plan is a nested loop of
// primary-key lookups whatever the table's statistics say (see daemon/modules/emails/drain.ts).
import { declareBatch } from '../../../db/batch.ts';
import { DELIVERIES_CHANNEL } from '../../webhooks/fan-out.ts';
import { FAN_OUT_COLUMNS, fanOutEventsSql } from '../../webhooks/sql/fan-out.ts';
import { SETTLE_BATCHES, SETTLED_COUNTS, failRow, retryRow, settleJobsCtes } from '../../../queue/sql/settle.ts';
import { spooledLogSet } from './spooled-log.ts';

/** What one delivery attempt changes on its log. Null fields keep what the log has. */
export interface LogOutcome {
  emailId: string;
  /** The log's created_at as claimed (RawSendLog.created_at). */
  createdAt: string;
  status: 'SENT' | 'FAILED' | 'QUEUED' | 'DELIVERED';
  error: string | null;
  smtpResponse: string | null;
  captured: boolean | null;
  /** JSON of the headers as they went out. */
  sentHeaders: string | null;
  /** Rendered template content (null: the log's own). */
  subject: string | null;
  html: string | null;
  text: string | null;
  /**
   * The attempt this outcome ends, counting from 1, where it is counted here: the drain's claim reads
   * its logs without writing them (claim-sends.ts), and its job's attempts so far include the runs a
   * crash lost (queue/sql/reclaim.ts), so the log's attempts become the greater of one more and
   * this. Unset where the log was marked SENDING, and counted, before (a send in its request) or the
   * outcome is not an attempt's (the MTA's per-recipient results).
   */
  attempt?: number | null;
  /**
   * The spool row the outcome is for (the outbound MTA's deliveries): the fields it keeps for the log
   * are written with this outcome where still pending (spooled-log.ts).
   */
  spoolId?: string | null;
}

/** The fields of a LogOutcome that keep what the log has (null), for outcomes that change only some. */
export const UNCHANGED_LOG_FIELDS = {
  smtpResponse: null,
  captured: null,
  sentHeaders: null,
  subject: null,
  html: null,
  text: null,
} as const satisfies Partial<LogOutcome>;

/** One row of a log's timeline (email_events). */
export interface TimelineRow {
  tenantId: string;
  emailId: string;
  type: string;
  data: Record<string, unknown>;
}

/** An event for webhooks (events), with the payload its endpoints receive (buildWebhookPayload). */
export interface OutcomeEvent {
  id: string;
  tenantId: string;
  type: string;
  emailId: string;
  data: Record<string, unknown>;
  createdAt: Date;
  payload: string;
  maxAttempts: number;
}

export interface JobSettlement {
  /** Jobs done: deleted. */
  done: string[];
  /** Jobs to try again after delayMs (to failed_jobs once their attempts are used up). */
  retry: { id: string; delayMs: number; error: string }[];
  /** Jobs given up on now: to failed_jobs. */
  fail: { id: string; error: string }[];
}

export interface SendOutcomes extends JobSettlement {
  logs: LogOutcome[];
  timeline: TimelineRow[];
  events: OutcomeEvent[];
}

const BATCHES = {
  ...SETTLE_BATCHES,
  /** Recorded in events and fanned out: the fan-out's columns, then those of the event row. */
  events: [
    ...FAN_OUT_COLUMNS,
    { name: 'email_id', type: 'uuid' },
    { name: 'data', type: 'text' },
    { name: 'created_at', type: 'timestamptz' },
  ],
  logs: [
    { name: 'email_id', type: 'uuid' },
    { name: 'created_at', type: 'timestamptz' },
    { name: 'status', type: 'text' },
    { name: 'attempt', type: 'int' },
    { name: 'error', type: 'text' },
    { name: 'smtp_response', type: 'text' },
    { name: 'captured', type: 'boolean' },
    { name: 'sent_headers', type: 'text' },
    { name: 'subject', type: 'text' },
    { name: 'html', type: 'text' },
    { name: 'text', type: 'text' },
    { name: 'spool_id', type: 'uuid' },
  ],
  timeline: [
    { name: 'tenant_id', type: 'uuid' },
    { name: 'email_id', type: 'uuid' },
    { name: 'type', type: 'text' },
    { name: 'data', type: 'text' },
  ],
} as const;

export const RECORD_OUTCOMES = declareBatch(
  'drain_record_outcomes',
  { batches: BATCHES, scalars: { workerId: 'text' } },
  (sql) => `
  WITH logs AS (
    UPDATE email_logs l
       SET status = o.status,
           error = o.error,
           smtp_response = COALESCE(o.smtp_response, l.smtp_response),
           captured = COALESCE(o.captured, l.captured),${spooledLogSet('l', 's', 'o')},
           updated_at = now()
      -- The spool row of an outbound MTA's delivery: what it keeps for the log is written with it.
      FROM ${sql.unnest('logs', 'o')} LEFT JOIN mta_spool s ON s.id = o.spool_id
     WHERE l.id = o.email_id AND l.created_at = o.created_at
    RETURNING l.id
  ), timeline AS (
    INSERT INTO email_events (tenant_id, email_id, type, data)
    SELECT t.tenant_id, t.email_id, t.type, CAST(t.data AS jsonb)
      FROM ${sql.unnest('timeline', 't')}
    RETURNING id
  ), recorded AS (
    INSERT INTO events (id, tenant_id, type, email_id, data, fanned_out_at, created_at)
    SELECT e.id, e.tenant_id, e.type, e.email_id, CAST(e.data AS jsonb), now(), e.created_at
      FROM ${sql.unnest('events', 'e', ['id', 'tenant_id', 'type', 'email_id', 'data', 'created_at'])}
    RETURNING id
  ), deliveries AS (
    ${fanOutEventsSql(
      sql.unnest(
        'events',
        'ev',
        FAN_OUT_COLUMNS.map((column) => column.name),
      ),
    )}
  ), ${settleJobsCtes(sql)}
  SELECT ${SETTLED_COUNTS},
         (SELECT count(*) FROM deliveries)::int AS webhook_deliveries,
         (SELECT count(*) FROM logs)::int + (SELECT count(*) FROM timeline)::int + (SELECT count(*) FROM recorded)::int AS written,
         -- Wakes the webhook delivery loop at commit instead of at its next poll (issue 27 §5).
         CASE WHEN EXISTS (SELECT 1 FROM deliveries) THEN pg_notify('${DELIVERIES_CHANNEL}', '')::text END AS notified`,
);

/** A batch without jobs to settle (the outbound MTA's outcomes: its spool rows are settled beside them). */
export const NO_JOBS: JobSettlement = { done: [], retry: [], fail: [] };

/** RECORD_OUTCOMES' values for a batch recorded by `workerId`. */
export function recordOutcomesValues(workerId: string, outcomes: SendOutcomes): unknown[] {
  return RECORD_OUTCOMES.values({
    workerId,
    events: outcomes.events.map((e) => ({
      id: e.id,
      tenant_id: e.tenantId,
      type: e.type,
      payload: e.payload,
      max_attempts: e.maxAttempts,
      email_id: e.emailId,
      data: JSON.stringify(e.data),
      created_at: e.createdAt,
    })),
    logs: outcomes.logs.map((l) => ({
      email_id: l.emailId,
      created_at: l.createdAt,
      status: l.status,
      attempt: l.attempt ?? null,
      error: l.error,
      smtp_response: l.smtpResponse,
      captured: l.captured,
      sent_headers: l.sentHeaders,
      subject: l.subject,
      html: l.html,
      text: l.text,
      spool_id: l.spoolId ?? null,
    })),
    timeline: outcomes.timeline.map((t) => ({
      tenant_id: t.tenantId,
      email_id: t.emailId,
      type: t.type,
      data: JSON.stringify(t.data),
    })),
    done: outcomes.done.map((id) => ({ id })),
    retry: outcomes.retry.map(retryRow),
    fail: outcomes.fail.map(failRow),
  });
}
