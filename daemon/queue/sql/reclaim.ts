// Expired leases: their holder stopped mid-job. Each job is put back in line with the lost run
// counted as an attempt, or moves to failed_jobs when that was its last.
import { declare } from '../../db/sql.ts';
import { moveToFailedSql } from './settle.ts';

const EXPIRED_ERROR = `'the lease of worker ' || j.locked_by || ' expired (the worker stopped mid-job)'`;

/** Answers one row per job: 'failed' (moved to failed_jobs) or 'reclaimed'. */
export const RECLAIM_EXPIRED_LEASES = declare(
  'queue.reclaim-expired-leases',
  `
  WITH expired AS (
    SELECT id FROM jobs WHERE locked_until < now() FOR UPDATE SKIP LOCKED
  ), gone AS (
    DELETE FROM jobs j USING expired e
     WHERE j.id = e.id AND j.attempts + 1 >= j.max_attempts
     RETURNING j.id, j.queue, j.tenant_id, j.payload, j.key, j.attempts + 1 AS attempts, j.max_attempts,
               ${EXPIRED_ERROR} AS last_error, j.created_at
  ), moved AS (
    ${moveToFailedSql('gone')}
    RETURNING id
  ), reclaimed AS (
    UPDATE jobs j
       SET attempts = j.attempts + 1, locked_by = NULL, locked_until = NULL, last_error = ${EXPIRED_ERROR}
      FROM expired e
     WHERE j.id = e.id AND j.attempts + 1 < j.max_attempts
     RETURNING j.id
  )
  SELECT 'failed' AS result FROM moved UNION ALL SELECT 'reclaimed' FROM reclaimed`,
);
