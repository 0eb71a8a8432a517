// Leases whose holder stopped (a thread or process killed mid-job) run out; this puts their jobs
// back in line. The lost run counts as an attempt, so a job that kills its worker every time ends
// in failed_jobs instead of looping forever.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export interface ReclaimResult {
  reclaimed: number;
  failed: number;
}

export async function reclaimExpiredLeases(sequelize: Sequelize, transaction?: Transaction): Promise<ReclaimResult> {
  const rows = await sequelize.query<{ result: 'failed' | 'reclaimed' }>(
    `WITH expired AS (
       SELECT id FROM jobs WHERE locked_until < now() FOR UPDATE SKIP LOCKED
     ), gone AS (
       DELETE FROM jobs j USING expired e
        WHERE j.id = e.id AND j.attempts + 1 >= j.max_attempts
        RETURNING j.id, j.queue, j.tenant_id, j.payload, j.key, j.attempts + 1 AS attempts, j.max_attempts,
                  'the lease of worker ' || j.locked_by || ' expired (the worker stopped mid-job)' AS last_error,
                  j.created_at
     ), moved AS (
       INSERT INTO failed_jobs (id, queue, tenant_id, payload, key, attempts, max_attempts, last_error, created_at)
       SELECT id, queue, tenant_id, payload, key, attempts, max_attempts, last_error, created_at FROM gone
       RETURNING id
     ), reclaimed AS (
       UPDATE jobs j
          SET attempts = j.attempts + 1, locked_by = NULL, locked_until = NULL,
              last_error = 'the lease of worker ' || j.locked_by || ' expired (the worker stopped mid-job)'
         FROM expired e
        WHERE j.id = e.id AND j.attempts + 1 < j.max_attempts
        RETURNING j.id
     )
     SELECT 'failed' AS result FROM moved UNION ALL SELECT 'reclaimed' FROM reclaimed`,
    { type: QueryTypes.SELECT, transaction },
  );
  return {
    reclaimed: rows.filter((row) => row.result === 'reclaimed').length,
    failed: rows.filter((row) => row.result === 'failed').length,
  };
}
