// The drain's two statements, on plain `pg` (daemon/db/sql.ts), in the manner of graphile-worker's
// getJobs / completeJobs: one statement claims a batch of send jobs together with their email logs,
// one statement records what happened to a batch. There is no per-message transaction: each
// statement is atomic on its own, and at-least-once holds because a job leaves the table only in the
// statement that records its log's outcome (a kill -9 in between leaves the lease to expire and the
// job to run again; the log, still SENDING, is sent again — duplicates are bounded by what was in
// flight, and the Message-ID fixed at accept time makes them recognisable).
//
// email_logs and email_events may be partitioned by month (primary key (id, created_at)): nothing
// relies on ON CONFLICT (id) there. A log is found by joining on its id row by row (claim) or on its
// whole key, id and created_at (record): the plan is then a nested loop of primary-key lookups
// whatever the table's statistics say. With `id = ANY(…)` and the hash join an unnest invites, a
// table never analysed yet (a new month's partition, autovacuum behind or off) was read whole by
// every statement: 40,000 logs made each record statement 70–85 ms and held the drain to ~400 msg/s.
import { declare, type Sql, type SqlRunner } from '../db/sql.ts';
import { DELIVERIES_CHANNEL, fanOutEventsSql } from '../modules/webhooks/fan-out.ts';

/** The columns of an email log that delivery needs (compose, render, relay choice). */
const LOG_COLUMNS = `l.id::text AS id, l.created_at::text AS created_at, l.tenant_id::text AS tenant_id, l.project_id::text AS project_id, l.message_id,
  l.from_address, l.to_addresses, l.cc_addresses, l.bcc_addresses, l.reply_to, l.subject, l.html_body, l.text_body,
  l.template_version_id::text AS template_version_id, l.data, l.locale, l.headers, l.tags, l.metadata, l.attachments,
  l.track_opens, l.track_clicks, l.test_mode`;

export interface RawSendLog {
  id: string;
  /** As text, to the microsecond: with the id, the log's primary key (recordSendOutcomes). */
  created_at: string;
  tenant_id: string;
  project_id: string | null;
  message_id: string;
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[];
  bcc_addresses: string[];
  reply_to: string[];
  subject: string;
  html_body: string | null;
  text_body: string | null;
  template_version_id: string | null;
  data: Record<string, unknown> | null;
  locale: string | null;
  headers: Record<string, string>;
  tags: string[];
  metadata: Record<string, unknown> | null;
  attachments: unknown[];
  track_opens: boolean;
  track_clicks: boolean;
  test_mode: boolean;
}

const UUID = `'^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'`;

// Leases due send jobs and, in the same statement, marks their logs SENDING (one attempt more).
// A job whose log is gone or already settled (SENT, FAILED, cancelled …) comes back without one.
const CLAIM_SENDS = declare(
  'drain_claim_sends',
  `
  WITH claimed AS (
    UPDATE jobs
       SET locked_by = $1, locked_until = now() + $2 * interval '1 millisecond'
     WHERE id IN (SELECT id FROM jobs
                   WHERE queue = 'send' AND locked_until IS NULL AND run_at <= now()
                   ORDER BY run_at, id
                   FOR UPDATE SKIP LOCKED
                   LIMIT $3)
    RETURNING id, attempts, max_attempts, run_at,
              CASE WHEN payload->>'emailId' ~ ${UUID} THEN CAST(payload->>'emailId' AS uuid) END AS email_id
  ), marked AS (
    UPDATE email_logs l
       SET status = 'SENDING', attempts = l.attempts + 1, updated_at = now()
      FROM (SELECT DISTINCT email_id FROM claimed WHERE email_id IS NOT NULL) c
     WHERE l.id = c.email_id
       AND l.status IN ('QUEUED', 'SENDING')
    RETURNING ${LOG_COLUMNS}
  )
  SELECT c.id::text AS job_id, c.attempts AS job_attempts, c.max_attempts AS job_max_attempts, c.email_id::text AS job_email_id, m.*
    FROM claimed c LEFT JOIN marked m ON m.id = c.email_id::text
   ORDER BY c.run_at, c.id`,
);

// The same marking for one log, without a job (a send delivered in its request, ?sync=true, and the
// single-job handler the tests drive).
const MARK_SENDING = declare(
  'drain_mark_sending',
  `
  UPDATE email_logs l SET status = 'SENDING', attempts = l.attempts + 1, updated_at = now()
   WHERE l.id = $1 AND l.status IN ('QUEUED', 'SENDING')
  RETURNING ${LOG_COLUMNS}`,
);

export interface ClaimedSend {
  jobId: string;
  /** Attempts made before this one. */
  attempts: number;
  maxAttempts: number;
  /** The job's emailId (null when its payload has none). */
  emailId: string | null;
  /** The log, now SENDING; null when it is gone or already settled. */
  log: RawSendLog | null;
}

/** Leases up to `limit` due send jobs to `workerId` for `leaseMs`, with their logs marked SENDING. */
export async function claimSends(sql: Sql, workerId: string, limit: number, leaseMs: number): Promise<ClaimedSend[]> {
  const rows = await sql.rows<
    RawSendLog & { job_id: string; job_attempts: number; job_max_attempts: number; job_email_id: string | null }
  >(CLAIM_SENDS, [workerId, leaseMs, limit]);
  return rows.map((row) => ({
    jobId: row.job_id,
    attempts: row.job_attempts,
    maxAttempts: row.job_max_attempts,
    emailId: row.job_email_id,
    log: row.id === null ? null : row,
  }));
}

const EXTEND_LEASES = declare(
  'drain_extend_leases',
  `
  UPDATE jobs SET locked_until = now() + $3 * interval '1 millisecond'
   WHERE id = ANY($1::bigint[]) AND locked_by = $2
  RETURNING id::text AS id`,
);

/** Pushes the lease of the send jobs this worker still holds; answers the ids it still holds. */
export async function extendSendLeases(sql: Sql, ids: string[], workerId: string, leaseMs: number): Promise<string[]> {
  if (ids.length === 0) return [];
  return (await sql.rows<{ id: string }>(EXTEND_LEASES, [ids, workerId, leaseMs])).map((row) => row.id);
}

/** Marks one log SENDING and answers it; null when it is gone or already settled. */
export async function markSending(sql: Sql, emailId: string, runner?: SqlRunner): Promise<RawSendLog | null> {
  const [row] = await sql.rows<RawSendLog>(MARK_SENDING, [emailId], runner);
  return row ?? null;
}

/** What one delivery attempt changes on its log. Null fields keep what the log has. */
export interface LogOutcome {
  emailId: string;
  /** The log's created_at as claimed (RawSendLog.created_at). */
  createdAt: string;
  /** SENDING: spooled for direct delivery (sent_at = when it was spooled), outcomes to come (mail/transport.ts). */
  status: 'SENT' | 'FAILED' | 'QUEUED' | 'SENDING';
  error: string | null;
  smtpResponse: string | null;
  captured: boolean | null;
  /** JSON of the headers as they went out. */
  sentHeaders: string | null;
  /** Rendered template content (null: the log's own). */
  subject: string | null;
  html: string | null;
  text: string | null;
}

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

export interface RecordedOutcomes {
  /** Jobs deleted, retried or moved to failed_jobs; fewer than asked when leases were lost. */
  settled: number;
  /** Jobs moved to failed_jobs because their last attempt failed. */
  failed: number;
  webhookDeliveries: number;
}

// $1–$5 are fanOutEventsSql's parallel arrays (the fan-out of the events is that statement, as a CTE).
const RECORD_OUTCOMES = declare(
  'drain_record_outcomes',
  `
  WITH logs AS (
    UPDATE email_logs l
       SET status = o.status, error = o.error,
           smtp_response = COALESCE(o.smtp_response, l.smtp_response),
           captured = COALESCE(o.captured, l.captured),
           sent_headers = COALESCE(CAST(o.sent_headers AS jsonb), l.sent_headers),
           subject = COALESCE(o.subject, l.subject),
           html_body = COALESCE(o.html, l.html_body),
           text_body = COALESCE(o.text, l.text_body),
           sent_at = CASE WHEN o.status IN ('SENT', 'SENDING') THEN now() ELSE l.sent_at END,
           updated_at = now()
      FROM unnest($10::uuid[], $29::timestamptz[], $11::text[], $12::text[], $13::text[], $14::boolean[], $15::text[], $16::text[], $17::text[], $18::text[])
           AS o(email_id, created_at, status, error, smtp_response, captured, sent_headers, subject, html, text)
     WHERE l.id = o.email_id AND l.created_at = o.created_at
    RETURNING l.id
  ), timeline AS (
    INSERT INTO email_events (tenant_id, email_id, type, data)
    SELECT t.tenant_id, t.email_id, t.type, CAST(t.data AS jsonb)
      FROM unnest($19::uuid[], $20::uuid[], $21::text[], $22::text[]) AS t(tenant_id, email_id, type, data)
    RETURNING id
  ), recorded AS (
    INSERT INTO events (id, tenant_id, type, email_id, data, fanned_out_at, created_at)
    SELECT e.id, e.tenant_id, e.type, e.email_id, CAST(e.data AS jsonb), now(), e.created_at
      FROM unnest($1::uuid[], $2::uuid[], $3::text[], $6::uuid[], $7::text[], $8::timestamptz[]) AS e(id, tenant_id, type, email_id, data, created_at)
    RETURNING id
  ), deliveries AS (
    ${fanOutEventsSql()}
  ), done AS (
    DELETE FROM jobs WHERE id = ANY($23::bigint[]) AND locked_by = $9 RETURNING id
  ), retry AS (
    SELECT * FROM unnest($24::bigint[], $25::int[], $26::text[]) AS r(id, delay_ms, error)
  ), given_up AS (
    SELECT id, NULL::int AS delay_ms, error FROM unnest($27::bigint[], $28::text[]) AS f(id, error)
    UNION ALL SELECT id, delay_ms, error FROM retry
  ), gone AS (
    DELETE FROM jobs j USING given_up g
     WHERE j.id = g.id AND j.locked_by = $9 AND (g.delay_ms IS NULL OR j.attempts + 1 >= j.max_attempts)
    RETURNING j.id, j.queue, j.tenant_id, j.payload, j.key, j.attempts + 1 AS attempts, j.max_attempts, g.error AS last_error, j.created_at
  ), moved AS (
    INSERT INTO failed_jobs (id, queue, tenant_id, payload, key, attempts, max_attempts, last_error, created_at)
    SELECT id, queue, tenant_id, payload, key, attempts, max_attempts, last_error, created_at FROM gone
    RETURNING id
  ), retried AS (
    UPDATE jobs j
       SET attempts = j.attempts + 1, last_error = r.error, locked_by = NULL, locked_until = NULL,
           run_at = now() + r.delay_ms * interval '1 millisecond'
      FROM retry r
     WHERE j.id = r.id AND j.locked_by = $9 AND j.attempts + 1 < j.max_attempts
    RETURNING j.id
  )
  SELECT (SELECT count(*) FROM done)::int + (SELECT count(*) FROM moved)::int + (SELECT count(*) FROM retried)::int AS settled,
         (SELECT count(*) FROM moved)::int AS failed,
         (SELECT count(*) FROM deliveries)::int AS webhook_deliveries,
         (SELECT count(*) FROM logs)::int + (SELECT count(*) FROM timeline)::int + (SELECT count(*) FROM recorded)::int AS written,
         CASE WHEN EXISTS (SELECT 1 FROM deliveries) THEN pg_notify('${DELIVERIES_CHANNEL}', '')::text END AS notified`,
);

/** Errors are kept for a human to read; a stack trace of megabytes helps nobody. */
function truncate(error: string): string {
  return error.length > 4000 ? `${error.slice(0, 4000)}…` : error;
}

/**
 * Records the outcomes of a batch in one statement: the logs' status, their timeline rows, the
 * events with their webhook fan-out, and the jobs (deleted, retried or moved to failed_jobs — only
 * those `workerId` still holds).
 */
export async function recordSendOutcomes(
  sql: Sql,
  workerId: string,
  outcomes: SendOutcomes,
  runner?: SqlRunner,
): Promise<RecordedOutcomes> {
  const { logs, timeline, events } = outcomes;
  const [row] = await sql.rows<{ settled: number; failed: number; webhook_deliveries: number }>(
    RECORD_OUTCOMES,
    [
      events.map((e) => e.id),
      events.map((e) => e.tenantId),
      events.map((e) => e.type),
      events.map((e) => e.payload),
      events.map((e) => e.maxAttempts),
      events.map((e) => e.emailId),
      events.map((e) => JSON.stringify(e.data)),
      events.map((e) => e.createdAt),
      workerId,
      logs.map((l) => l.emailId),
      logs.map((l) => l.status),
      logs.map((l) => l.error),
      logs.map((l) => l.smtpResponse),
      logs.map((l) => l.captured),
      logs.map((l) => l.sentHeaders),
      logs.map((l) => l.subject),
      logs.map((l) => l.html),
      logs.map((l) => l.text),
      timeline.map((t) => t.tenantId),
      timeline.map((t) => t.emailId),
      timeline.map((t) => t.type),
      timeline.map((t) => JSON.stringify(t.data)),
      outcomes.done,
      outcomes.retry.map((r) => r.id),
      outcomes.retry.map((r) => Math.max(0, Math.round(r.delayMs))),
      outcomes.retry.map((r) => truncate(r.error)),
      outcomes.fail.map((f) => f.id),
      outcomes.fail.map((f) => truncate(f.error)),
      logs.map((l) => l.createdAt),
    ],
    runner,
  );
  return { settled: row.settled, failed: row.failed, webhookDeliveries: row.webhook_deliveries };
}
