// Putting work in and taking not-yet-started work out.
import { declare } from '../../db/sql.ts';

/**
 * `INSERT INTO jobs …` over a SELECT that yields, in order: queue, tenant_id, payload (jsonb),
 * run_at, max_attempts, key. For statements that write a job together with the row that asks for
 * it (an accepted send, a recovery mail): the one column list of a new job.
 */
export function insertJobsSql(select: string): string {
  return `INSERT INTO jobs (queue, tenant_id, payload, run_at, max_attempts, key)
    ${select}`;
}

/**
 * $1 queue, $2 tenant, $3 payload (json text), $4 run at (null: now), $5 max attempts, $6 key.
 * With a key that already waits in the queue, nothing is inserted and the existing job's id comes back.
 */
export const ENQUEUE_JOB = declare(
  'queue.enqueue-job',
  `
  WITH inserted AS (
    ${insertJobsSql(`VALUES ($1::text, $2::uuid, CAST($3::text AS jsonb), COALESCE($4::timestamptz, now()), $5::int, $6::text)`)}
    ON CONFLICT (queue, key) WHERE key IS NOT NULL DO NOTHING
    RETURNING id, run_at
  )
  SELECT id::text AS id, true AS inserted FROM inserted
  UNION ALL
  SELECT id::text, false FROM jobs
   WHERE queue = $1::text AND key = $6::text AND NOT EXISTS (SELECT 1 FROM inserted)`,
);

/** $1 queue, $2 key: the waiting job with this key, unless a worker has taken it. */
export const REMOVE_JOB = declare(
  'queue.remove-job',
  `DELETE FROM jobs WHERE queue = $1 AND key = $2 AND locked_until IS NULL RETURNING id`,
);

/** $1 channel, $2 queue: wakes the queue's workers (LISTEN svc_jobs_<queue>). */
export const WAKE = declare('queue.wake', 'SELECT pg_notify($1, $2)');
