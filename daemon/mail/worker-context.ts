// What a worker thread hands each job handler and maintenance task: its connections, logger and mail
// resources (jobs/thread.ts creates them). In mail/, not queue/, because the context holds mail's
// resources and queue/ sits below mail/; the queue's own contract stays in queue/types.ts.
import type { Sequelize } from 'sequelize';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Secrets } from '../secrets.ts';
import type { Sql } from '../db/sql.ts';
import type { JobOutcome, JobRow } from '../queue/types.ts';
import type { MailResources } from './resources.ts';

/** A worker thread's connections, logger and mail resources (jobs/thread.ts creates them). */
export interface WorkerContext extends MailResources {
  config: Config;
  secrets: Secrets;
  sequelize: Sequelize;
  /** Plain `pg` for the hot paths (daemon/db/sql.ts). */
  sql: Sql;
  log: Logger;
  /** Identifies this worker in lease columns (thread and process). */
  workerId: string;
}

export type JobHandler = (job: JobRow, ctx: WorkerContext) => Promise<JobOutcome>;

/** Periodic work run by the maintenance worker (reclaiming leases, pruning, re-verifying). */
export interface MaintenanceTask {
  name: string;
  everyMs: number;
  run(ctx: WorkerContext): Promise<void>;
}
