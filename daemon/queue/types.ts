// The contract between the queue (claiming, leases, retries) and the code that does the work.
// A handler gets a claimed job and says what happened; the queue does the bookkeeping. The handler's
// and a worker thread's types are in mail/worker-context.ts: a thread's context holds mail resources.
import type { QueueName } from '../../shared/constants.ts';

export interface JobRow {
  id: string;
  queue: QueueName;
  tenantId: string | null;
  payload: Record<string, unknown>;
  /** Attempts made before this one (0 on the first run). */
  attempts: number;
  maxAttempts: number;
  runAt: Date;
  createdAt: Date;
}

export type JobOutcome =
  | { kind: 'done' }
  /** Try again after delayMs (the queue gives up after maxAttempts and keeps the error). */
  | { kind: 'retry'; delayMs: number; error: string }
  /** Give up now; the error is kept. */
  | { kind: 'fail'; error: string };

export interface EnqueueJobOptions {
  queue: QueueName;
  payload: Record<string, unknown>;
  tenantId?: string | null;
  /** Not before this moment (a scheduled send, a retry planned by the caller). Default: now. */
  runAt?: Date;
  /** Default 5. After this many failed attempts the job moves to failed_jobs. */
  maxAttempts?: number;
  /**
   * At most one unfinished job per (queue, key). Enqueueing a key that is already waiting keeps the
   * existing job and returns its id; removeJob(queue, key) cancels it.
   */
  key?: string | null;
}

/** One queue's load, as /health/queues reports it. */
export type { QueueStats } from '../../shared/schemas/health.ts';
