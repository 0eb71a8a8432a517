// Leasing jobs: claim due jobs of a queue, extend the leases a worker still holds, give them back.
// SKIP LOCKED lets any number of workers claim side by side.
import { declare } from '../../db/sql.ts';
import { JOB_COLUMNS } from './job-row.ts';

/**
 * The claim of jobs (SQL expressions): leases up to `limit` due jobs of `queue` to `worker` for `leaseMs`,
 * oldest first, skipping those another worker is locking, and answers `returning`. CLAIM_JOBS is it; the
 * drain's claim (emails/sql/claim-sends.ts) embeds it to read the send jobs' logs in the same statement.
 */
export function claimJobsSql(claim: {
  queue: string;
  worker: string;
  limit: string;
  leaseMs: string;
  returning: string;
}): string {
  return `
  UPDATE jobs
     SET locked_by = ${claim.worker}, locked_until = now() + ${claim.leaseMs} * interval '1 millisecond'
   WHERE id IN (
     SELECT id FROM jobs
      WHERE queue = ${claim.queue} AND locked_until IS NULL AND run_at <= now()
      ORDER BY run_at, id
      FOR UPDATE SKIP LOCKED
      LIMIT ${claim.limit})
  RETURNING ${claim.returning}`;
}

/** $1 queue, $2 worker id, $3 limit, $4 lease (ms): up to $3 due jobs of $1, oldest first. */
export const CLAIM_JOBS = declare(
  'queue.claim-jobs',
  claimJobsSql({ queue: '$1', worker: '$2', limit: '$3', leaseMs: '$4', returning: JOB_COLUMNS }),
);

/** $1 job ids, $2 worker id, $3 lease (ms): pushes the leases $2 still holds; answers their ids. */
export const EXTEND_LEASES = declare(
  'queue.extend-leases',
  `
  UPDATE jobs SET locked_until = now() + $3 * interval '1 millisecond'
   WHERE id = ANY($1::bigint[]) AND locked_by = $2
  RETURNING id::text AS id`,
);

/** $1 worker id: gives back every job it holds, without counting an attempt (a clean shutdown). */
export const RELEASE_JOBS = declare(
  'queue.release-jobs',
  `UPDATE jobs SET locked_by = NULL, locked_until = NULL WHERE locked_by = $1 RETURNING id`,
);
