// Leases: a worker claims due jobs for a while, extends the lease while it works, and gives back
// what it holds when it shuts down. The statements live in ./sql/claim.ts.
import type { Sequelize, Transaction } from 'sequelize';
import type { QueueName } from '../../shared/constants.ts';
import { sequelizeRows } from '../db/sql.ts';
import { CLAIM_JOBS, EXTEND_LEASES, RELEASE_JOBS } from './sql/claim.ts';
import { toJobRow, type RawJobRow } from './sql/job-row.ts';
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
  const rows = await sequelizeRows<RawJobRow>(sequelize, CLAIM_JOBS, [queue, workerId, limit, leaseMs], transaction);
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
  const rows = await sequelizeRows<{ id: string }>(sequelize, EXTEND_LEASES, [ids, workerId, leaseMs], transaction);
  return rows.map((row) => row.id);
}

/** Gives back every job `workerId` holds, without counting an attempt (a clean shutdown). */
export async function releaseJobs(sequelize: Sequelize, workerId: string, transaction?: Transaction): Promise<number> {
  return (await sequelizeRows(sequelize, RELEASE_JOBS, [workerId], transaction)).length;
}
