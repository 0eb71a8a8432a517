// The loop of a queue worker, on the leased-batch engine (queue/leased-batch.ts) like the send drain,
// the webhook lanes and the MTA: claim due jobs in batches, run them with bounded concurrency (one lane
// of `concurrency` slots) while holding their leases, record each outcome; sleep until a NOTIFY, a
// free slot or the poll (queue/leased-batch-loop.ts).
import { errorText } from '../errors.ts';
import type { QueueName } from '../../shared/constants.ts';
import { backoffDelayMs } from '../queue/backoff.ts';
import { claimJobs, extendLease } from '../queue/claim.ts';
import { completeJob, failJob, retryJob } from '../queue/finish.ts';
import { createLeasedBatchEngine, FixedLane } from '../queue/leased-batch.ts';
import { runLeasedBatchLoop } from '../queue/leased-batch-loop.ts';
import type { JobOutcome, JobRow } from '../queue/types.ts';
import { createWaker, listenForJobs } from '../queue/wake.ts';
import type { JobHandler } from '../mail/worker-context.ts';
import type { ThreadRuntime } from './thread.ts';

const CLAIM_ERROR_PAUSE_MS = 1_000;

export async function runQueueLoop(runtime: ThreadRuntime, queue: QueueName, handler: JobHandler): Promise<void> {
  const { ctx, tuning, signal } = runtime;
  const { sequelize, log, workerId } = ctx;
  const noun = `${queue} jobs`;

  const record = async (job: JobRow, outcome: JobOutcome) => {
    switch (outcome.kind) {
      case 'done':
        if (!(await completeJob(sequelize, job.id, workerId)))
          log.warn({ job: job.id }, 'job finished after its lease was lost');
        return;
      case 'retry': {
        const result = await retryJob(sequelize, job.id, workerId, outcome.delayMs, outcome.error);
        if (result === 'failed')
          log.warn({ job: job.id, queue, err: outcome.error }, 'job failed for good: no attempts left');
        return;
      }
      case 'fail':
        await failJob(sequelize, job.id, workerId, outcome.error);
        log.warn({ job: job.id, queue, err: outcome.error }, 'job failed for good');
        return;
    }
  };

  const run = async (job: JobRow): Promise<JobOutcome> => {
    try {
      return await handler(job, ctx);
    } catch (error) {
      // A handler that throws did not decide: treat it as transient and back off.
      return { kind: 'retry', delayMs: backoffDelayMs(job.attempts, tuning.retryBaseMs), error: errorText(error) };
    }
  };

  const engine = createLeasedBatchEngine<JobRow, JobOutcome, FixedLane<JobRow>>({
    log,
    noun,
    leaseMs: tuning.leaseMs,
    claimBatch: tuning.batchSize,
    maxActive: tuning.concurrency,
    // A slot is free again once its job's outcome is recorded, as each job's statements are its own.
    maxHeld: tuning.concurrency,
    maxAnswered: Infinity,
    extendsAnswered: true,
    claimAt: 1,
    commitBatchMax: Infinity,
    commitLingerMs: 0,
    commitLingerBelow: 0,
    commitRetryMs: CLAIM_ERROR_PAUSE_MS,
    idleLaneMs: Infinity,
    idOf: (job) => job.id,
    laneOf: () => queue,
    newLane: (key) => new FixedLane<JobRow>(key, tuning.concurrency),
    newLaneRoom: tuning.concurrency,
    claim: (want) => claimJobs(sequelize, queue, workerId, want, tuning.leaseMs),
    extend: async (jobs) =>
      (
        await extendLease(
          sequelize,
          jobs.map((job) => job.id),
          workerId,
          tuning.leaseMs,
        )
      ).length,
    run,
    // Never throws: each job's outcome is written by its own statements, side by side, and one that
    // cannot be written is left to its lease (the job runs again).
    commit: async (batch) => {
      await Promise.all(
        batch.map(({ item: job, outcome }) =>
          record(job, outcome).catch((error: unknown) =>
            log.error(
              { job: job.id, err: errorText(error) },
              'could not record the outcome; the job runs again after its lease',
            ),
          ),
        ),
      );
    },
  });

  const waker = createWaker();
  const listener = runtime.embedded ? null : listenForJobs(runtime.data.databaseUrl, queue, waker, log);
  try {
    await runLeasedBatchLoop(engine, {
      signal,
      waker,
      log,
      noun,
      pollMs: runtime.embedded ? tuning.embeddedPollMs : tuning.pollMs,
      claimGapMs: 0,
      claimErrorPauseMs: CLAIM_ERROR_PAUSE_MS,
      drainTimeoutMs: tuning.drainTimeoutMs,
    });
  } finally {
    await listener?.close();
  }
}
