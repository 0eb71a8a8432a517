// Leases whose holder stopped (a thread or process killed mid-job) run out; this puts their jobs
// back in line. The lost run counts as an attempt, so a job that kills its worker every time ends
// in failed_jobs instead of looping forever. The statement lives in ./sql/reclaim.ts.
import type { Sequelize, Transaction } from 'sequelize';
import { sequelizeRows } from '../db/sql.ts';
import { RECLAIM_EXPIRED_LEASES } from './sql/reclaim.ts';

export interface ReclaimResult {
  reclaimed: number;
  failed: number;
}

export async function reclaimExpiredLeases(sequelize: Sequelize, transaction?: Transaction): Promise<ReclaimResult> {
  const rows = await sequelizeRows<{ result: 'failed' | 'reclaimed' }>(
    sequelize,
    RECLAIM_EXPIRED_LEASES,
    [],
    transaction,
  );
  return {
    reclaimed: rows.filter((row) => row.result === 'reclaimed').length,
    failed: rows.filter((row) => row.result === 'failed').length,
  };
}
