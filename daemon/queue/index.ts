// The Postgres-backed queue: one SQL statement per function, each taking an optional transaction.
export { enqueueJob, removeJob, DEFAULT_MAX_ATTEMPTS } from './enqueue.ts';
export { claimJobs, extendLease, releaseJobs } from './claim.ts';
export { completeJob, retryJob, failJob, type RetryResult } from './finish.ts';
export { reclaimExpiredLeases, type ReclaimResult } from './leases.ts';
export { queueStats } from './stats.ts';
export { backoffDelayMs } from './backoff.ts';
export { queueChannel } from './channel.ts';
export type * from './types.ts';
