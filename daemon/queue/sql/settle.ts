// What happens to leased jobs after their handler ran, in ONE statement for every caller: the
// queue loop's completeJob / retryJob / failJob (one job) and the send drain's record statement (a
// batch, emails/sql/record-outcomes.ts, which embeds these CTEs). Only jobs the worker still holds
// are touched, so a worker whose lease was reclaimed cannot overwrite the new holder's work. A job
// retried after its last attempt, or given up on, moves to failed_jobs with its error.
import { declareBatch, type BatchSql } from '../../db/batch.ts';

/** The batches of a settlement: jobs done, to retry after delay_ms, given up on. */
export const SETTLE_BATCHES = {
  done: [{ name: 'id', type: 'bigint' }],
  retry: [
    { name: 'id', type: 'bigint' },
    { name: 'delay_ms', type: 'int' },
    { name: 'error', type: 'text' },
  ],
  fail: [
    { name: 'id', type: 'bigint' },
    { name: 'error', type: 'text' },
  ],
} as const;

export type SettleBatch = keyof typeof SETTLE_BATCHES;

/** The one column list of failed_jobs, filled from a CTE `gone` of jobs deleted with their last error. */
export function moveToFailedSql(gone: string): string {
  return `INSERT INTO failed_jobs (id, queue, tenant_id, payload, key, attempts, max_attempts, last_error, created_at)
    SELECT id, queue, tenant_id, payload, key, attempts, max_attempts, last_error, created_at FROM ${gone}`;
}

/**
 * The CTEs `done`, `moved` (to failed_jobs) and `retried`, from the batches done / retry / fail and
 * the scalar workerId of the enclosing statement.
 */
export function settleJobsCtes(sql: BatchSql<SettleBatch, 'workerId'>): string {
  const workerId = sql.scalar('workerId');
  return `done AS (
    DELETE FROM jobs WHERE id = ANY(${sql.column('done', 'id')}) AND locked_by = ${workerId} RETURNING id
  ), retry AS (
    SELECT * FROM ${sql.unnest('retry', 'r')}
  ), given_up AS (
    SELECT id, NULL::int AS delay_ms, error FROM ${sql.unnest('fail', 'f')}
    UNION ALL SELECT id, delay_ms, error FROM retry
  ), gone AS (
    DELETE FROM jobs j USING given_up g
     WHERE j.id = g.id AND j.locked_by = ${workerId} AND (g.delay_ms IS NULL OR j.attempts + 1 >= j.max_attempts)
    RETURNING j.id, j.queue, j.tenant_id, j.payload, j.key, j.attempts + 1 AS attempts, j.max_attempts, g.error AS last_error, j.created_at
  ), moved AS (
    ${moveToFailedSql('gone')}
    RETURNING id
  ), retried AS (
    UPDATE jobs j
       SET attempts = j.attempts + 1, last_error = r.error, locked_by = NULL, locked_until = NULL,
           run_at = now() + r.delay_ms * interval '1 millisecond'
      FROM retry r
     WHERE j.id = r.id AND j.locked_by = ${workerId} AND j.attempts + 1 < j.max_attempts
    RETURNING j.id
  )`;
}

/** The settled count of `settleJobsCtes` (done, moved and retried) and the moved count. */
export const SETTLED_COUNTS = `(SELECT count(*) FROM done)::int + (SELECT count(*) FROM moved)::int + (SELECT count(*) FROM retried)::int AS settled,
         (SELECT count(*) FROM moved)::int AS failed`;

/** Settles jobs on their own (the queue loop; the drain records them with its logs). */
export const SETTLE_JOBS = declareBatch(
  'queue.settle-jobs',
  { batches: SETTLE_BATCHES, scalars: { workerId: 'text' } },
  (sql) => `
  WITH ${settleJobsCtes(sql)}
  SELECT ${SETTLED_COUNTS}`,
);

export interface SettledCounts {
  /** Jobs deleted, retried or moved to failed_jobs; fewer than asked when leases were lost. */
  settled: number;
  /** Jobs moved to failed_jobs. */
  failed: number;
}

/** Errors are kept for a human to read; a stack trace of megabytes helps nobody. */
export function truncateJobError(error: string): string {
  return error.length > 4000 ? `${error.slice(0, 4000)}…` : error;
}

/** A retry row as the statement takes it: the delay whole and not negative, the error truncated. */
export function retryRow(retry: { id: string; delayMs: number; error: string }) {
  return { id: retry.id, delay_ms: Math.max(0, Math.round(retry.delayMs)), error: truncateJobError(retry.error) };
}

/** A give-up row as the statement takes it: the error truncated. */
export function failRow(fail: { id: string; error: string }) {
  return { id: fail.id, error: truncateJobError(fail.error) };
}
