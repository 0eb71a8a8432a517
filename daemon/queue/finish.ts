// What happens to a leased job after its handler ran. Each function checks that the caller still
// holds the lease, so a worker whose lease was reclaimed cannot overwrite the new holder's work.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

const MOVE_TO_FAILED = `INSERT INTO failed_jobs (id, queue, tenant_id, payload, key, attempts, max_attempts, last_error, created_at)
       SELECT id, queue, tenant_id, payload, key, attempts, max_attempts, last_error, created_at FROM gone`;

/** The job is done: it leaves the table. False when the lease was lost meanwhile. */
export async function completeJob(
  sequelize: Sequelize,
  id: string,
  workerId: string,
  transaction?: Transaction,
): Promise<boolean> {
  const rows = await sequelize.query(`DELETE FROM jobs WHERE id = :id AND locked_by = :workerId RETURNING id`, {
    replacements: { id, workerId },
    type: QueryTypes.SELECT,
    transaction,
  });
  return rows.length > 0;
}

export type RetryResult = 'retried' | 'failed' | 'lease-lost';

/**
 * Counts the attempt and plans the next one `delayMs` from now; a job that has used its last
 * attempt moves to failed_jobs with the error instead.
 */
export async function retryJob(
  sequelize: Sequelize,
  id: string,
  workerId: string,
  delayMs: number,
  error: string,
  transaction?: Transaction,
): Promise<RetryResult> {
  const rows = await sequelize.query<{ result: 'retried' | 'failed' }>(
    `WITH gone AS (
       DELETE FROM jobs
        WHERE id = :id AND locked_by = :workerId AND attempts + 1 >= max_attempts
        RETURNING id, queue, tenant_id, payload, key, attempts + 1 AS attempts, max_attempts,
                  CAST(:error AS text) AS last_error, created_at
     ), moved AS (
       ${MOVE_TO_FAILED}
       RETURNING id
     ), retried AS (
       UPDATE jobs
          SET attempts = attempts + 1, last_error = :error, locked_by = NULL, locked_until = NULL,
              run_at = now() + :delayMs * interval '1 millisecond'
        WHERE id = :id AND locked_by = :workerId AND attempts + 1 < max_attempts
        RETURNING id
     )
     SELECT 'failed' AS result FROM moved UNION ALL SELECT 'retried' FROM retried`,
    {
      replacements: { id, workerId, delayMs: Math.max(0, Math.round(delayMs)), error: truncate(error) },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows[0]?.result ?? 'lease-lost';
}

/** Gives up on the job now: it moves to failed_jobs with the error. False when the lease was lost. */
export async function failJob(
  sequelize: Sequelize,
  id: string,
  workerId: string,
  error: string,
  transaction?: Transaction,
): Promise<boolean> {
  const rows = await sequelize.query(
    `WITH gone AS (
       DELETE FROM jobs WHERE id = :id AND locked_by = :workerId
        RETURNING id, queue, tenant_id, payload, key, attempts + 1 AS attempts, max_attempts,
                  CAST(:error AS text) AS last_error, created_at
     )
     ${MOVE_TO_FAILED}
     RETURNING id`,
    { replacements: { id, workerId, error: truncate(error) }, type: QueryTypes.SELECT, transaction },
  );
  return rows.length > 0;
}

/** Errors are kept for a human to read; a stack trace of megabytes helps nobody. */
function truncate(error: string): string {
  return error.length > 4000 ? `${error.slice(0, 4000)}…` : error;
}
