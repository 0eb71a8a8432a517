// Knobs of the worker loops. Production uses the defaults; tests shorten leases and intervals.
import type { Config } from '../config.ts';

export interface QueueTuning {
  /** How long a claim holds a job before another worker may take it. Extended every third of it. */
  leaseMs: number;
  /** Jobs claimed per statement. */
  batchSize: number;
  /** Jobs one thread runs at the same time. */
  concurrency: number;
  /** Safety-net poll when LISTEN/NOTIFY works (real PostgreSQL). */
  pollMs: number;
  /** Poll on the embedded PGlite, where a NOTIFY does not reach other socket connections. */
  embeddedPollMs: number;
  /** How often the maintenance thread puts expired leases back in line. */
  reclaimEveryMs: number;
  /** On shutdown, how long in-flight jobs may take before their leases are released anyway. */
  drainTimeoutMs: number;
  /** First retry delay when a handler throws instead of answering an outcome. */
  retryBaseMs: number;
}

export const DEFAULT_TUNING: QueueTuning = {
  leaseMs: 60_000,
  batchSize: 10,
  concurrency: 10,
  pollMs: 2_000,
  embeddedPollMs: 250,
  reclaimEveryMs: 5_000,
  drainTimeoutMs: 10_000,
  retryBaseMs: 5_000,
};

/** JOB_LEASE_MS, when set: over the lease of every queue, including a loop's own tuning (the campaign loop's). */
export function configuredLease(config: Pick<Config, 'jobLeaseMs'>): Partial<QueueTuning> {
  return config.jobLeaseMs === null ? {} : { leaseMs: config.jobLeaseMs };
}

/**
 * Send jobs a send-worker thread holds in delivery at once, per SMTP pool connection. Those beyond
 * the pool's connections wait in nodemailer's queue, so a connection that finishes a message finds
 * the next one ready while the loop claims more. With 4 per connection (20 for a pool of 5), claims
 * of 5–8 jobs at 5–7 ms each, one at a time, capped the unsigned drain near 1,000 msg/s with half
 * the slots empty (docs/drain.md).
 */
export const SEND_JOBS_PER_SMTP_CONNECTION = 8;

export function sendWorkerConcurrency(config: Pick<Config, 'smtpMaxConnections'>): number {
  return SEND_JOBS_PER_SMTP_CONNECTION * config.smtpMaxConnections;
}

/** The send worker's tuning: its concurrency, claimed half of it at a time (the loop claims once half a batch is free). */
export function sendWorkerTuning(config: Pick<Config, 'smtpMaxConnections'>): Partial<QueueTuning> {
  const concurrency = sendWorkerConcurrency(config);
  return { concurrency, batchSize: Math.ceil(concurrency / 2) };
}

/**
 * The campaign expansion loop: few chunks at once (each is a transaction of up to 1,000 sends) and a
 * short lease, so a chunk a dead worker held is taken up again within seconds.
 */
export const CAMPAIGN_TUNING: Partial<QueueTuning> = { concurrency: 2, batchSize: 2, leaseMs: 20_000 };
