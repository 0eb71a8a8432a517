// Leases: a worker claims due jobs for a while, extends the lease while it works, and gives back
// what it holds when it shuts down. SKIP LOCKED lets any number of workers claim side by side.
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import type { QueueName } from '../../shared/constants.ts';
import { JOB_COLUMNS, toJobRow, type RawJobRow } from './rows.ts';
import type { JobRow } from './types.ts';

/** Leases up to `limit` due jobs of `queue` to `workerId` for `leaseMs`, oldest first. */
export async function claimJobs(
  sequelize: Sequelize,
  queue: QueueName,
  workerId: string,
  limit: number,
  leaseMs: number,
  transaction?: Transaction,
): Promise<JobRow[]> {
  const rows = await sequelize.query<RawJobRow>(
    `UPDATE jobs
        SET locked_by = :workerId, locked_until = now() + :leaseMs * interval '1 millisecond'
      WHERE id IN (
        SELECT id FROM jobs
         WHERE queue = :queue AND locked_until IS NULL AND run_at <= now()
         ORDER BY run_at, id
         FOR UPDATE SKIP LOCKED
         LIMIT :limit)
      RETURNING ${JOB_COLUMNS}`,
    { replacements: { queue, workerId, limit, leaseMs }, type: QueryTypes.SELECT, transaction },
  );
  return rows.map(toJobRow).sort((a, b) => a.runAt.getTime() - b.runAt.getTime());
}

/** Pushes the lease of jobs this worker still holds; answers the ids it still holds. */
export async function extendLease(
  sequelize: Sequelize,
  ids: string[],
  workerId: string,
  leaseMs: number,
  transaction?: Transaction,
): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sequelize.query<{ id: string }>(
    `UPDATE jobs SET locked_until = now() + :leaseMs * interval '1 millisecond'
      WHERE id IN (:ids) AND locked_by = :workerId
      RETURNING id::text AS id`,
    { replacements: { ids, workerId, leaseMs }, type: QueryTypes.SELECT, transaction },
  );
  return rows.map((row) => row.id);
}

/** Gives back every job `workerId` holds, without counting an attempt (a clean shutdown). */
export async function releaseJobs(sequelize: Sequelize, workerId: string, transaction?: Transaction): Promise<number> {
  const rows = await sequelize.query(
    `UPDATE jobs SET locked_by = NULL, locked_until = NULL WHERE locked_by = :workerId RETURNING id`,
    { replacements: { workerId }, type: QueryTypes.SELECT, transaction },
  );
  return rows.length;
}
