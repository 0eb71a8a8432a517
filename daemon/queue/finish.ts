// What happens to a leased job after its handler ran: one job through the queue's one settle
// statement (./sql/settle.ts), which checks that the caller still holds the lease, so a worker whose
// lease was reclaimed cannot overwrite the new holder's work.
import type { Sequelize, Transaction } from 'sequelize';
import { sequelizeRows } from '../db/sql.ts';
import { SETTLE_JOBS, failRow, retryRow, type SettledCounts } from './sql/settle.ts';

async function settleOne(
  sequelize: Sequelize,
  workerId: string,
  batches: Partial<Parameters<typeof SETTLE_JOBS.values>[0]>,
  transaction?: Transaction,
): Promise<SettledCounts> {
  const values = SETTLE_JOBS.values({ done: [], retry: [], fail: [], ...batches, workerId });
  const [row] = await sequelizeRows<SettledCounts>(sequelize, SETTLE_JOBS.statement, values, transaction);
  return row;
}

/** The job is done: it leaves the table. False when the lease was lost meanwhile. */
export async function completeJob(
  sequelize: Sequelize,
  id: string,
  workerId: string,
  transaction?: Transaction,
): Promise<boolean> {
  return (await settleOne(sequelize, workerId, { done: [{ id }] }, transaction)).settled > 0;
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
  const counts = await settleOne(sequelize, workerId, { retry: [retryRow({ id, delayMs, error })] }, transaction);
  return counts.failed > 0 ? 'failed' : counts.settled > 0 ? 'retried' : 'lease-lost';
}

/** Gives up on the job now: it moves to failed_jobs with the error. False when the lease was lost. */
export async function failJob(
  sequelize: Sequelize,
  id: string,
  workerId: string,
  error: string,
  transaction?: Transaction,
): Promise<boolean> {
  return (await settleOne(sequelize, workerId, { fail: [failRow({ id, error })] }, transaction)).settled > 0;
}
