// The drain's calls, on plain `pg` (daemon/db/sql.ts), in the manner of graphile-worker's
// getJobs / completeJobs: one statement claims a batch of send jobs together with their email logs,
// one statement records what happened to a batch. The statements live with their table:
// ./sql/claim-sends.ts and record-outcomes.ts (the jobs' part: daemon/queue/sql/). In emails/, not
// queue/, because its statements are email_logs' (queue/ sits below the modules). There is no
// per-message transaction: each statement is atomic on its own, and at-least-once holds because a job
// leaves the table only in the statement that records its log's outcome (a kill -9 in between leaves
// the lease to expire and the job to run again; the log, still QUEUED, is sent again — duplicates are
// bounded by what was in flight, and the Message-ID fixed at accept time makes them recognisable). The
// claim reads the logs without writing them; each log is written once, with its outcome.
//
// email_logs and email_events may be partitioned by month (primary key (id, created_at)): nothing
// relies on ON CONFLICT (id) there. A log is found by joining on its id row by row (claim) or on its
// whole key, id and created_at (record): the plan is then a nested loop of primary-key lookups
// whatever the table's statistics say. With `id = ANY(…)` and the hash join an unnest invites, a
// table never analysed yet (a new month's partition, autovacuum behind or off) was read whole by
// every statement: 40,000 logs made each record statement 70–85 ms and held the drain to ~400 msg/s.
import type { Sql, SqlRunner } from '../../db/sql.ts';
import { CLAIM_SENDS, MARK_SENDING } from './sql/claim-sends.ts';
import type { RawSendLog } from './sql/log-columns.ts';
import { RECORD_OUTCOMES, recordOutcomesValues, type SendOutcomes } from './sql/record-outcomes.ts';
import { EXTEND_LEASES } from '../../queue/sql/claim.ts';

export type { RawSendLog } from './sql/log-columns.ts';
export type { LogOutcome, TimelineRow, OutcomeEvent, JobSettlement, SendOutcomes } from './sql/record-outcomes.ts';

export interface ClaimedSend {
  jobId: string;
  /** Attempts made before this one. */
  attempts: number;
  maxAttempts: number;
  /** The job's emailId (null when its payload has none). */
  emailId: string | null;
  /** The log (QUEUED, not written by the claim); null when it is gone or already settled. */
  log: RawSendLog | null;
}

/** Leases up to `limit` due send jobs to `workerId` for `leaseMs`, with their logs (read, not written). */
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

export interface RecordedOutcomes {
  /** Jobs deleted, retried or moved to failed_jobs; fewer than asked when leases were lost. */
  settled: number;
  /** Jobs moved to failed_jobs because their last attempt failed. */
  failed: number;
  webhookDeliveries: number;
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
  const [row] = await sql.rows<{ settled: number; failed: number; webhook_deliveries: number }>(
    RECORD_OUTCOMES.statement,
    recordOutcomesValues(workerId, outcomes),
    runner,
  );
  return { settled: row.settled, failed: row.failed, webhookDeliveries: row.webhook_deliveries };
}
