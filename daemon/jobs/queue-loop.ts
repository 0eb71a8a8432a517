// The loop of a queue worker: claim due jobs in batches, run them with bounded concurrency while
// holding their leases, record each outcome; sleep until a NOTIFY, a free slot or the poll.
import { errorText } from '../errors.ts';
import type { QueueName } from '../../shared/constants.ts';
import { backoffDelayMs } from '../queue/backoff.ts';
import { claimJobs, extendLease } from '../queue/claim.ts';
import { completeJob, failJob, retryJob } from '../queue/finish.ts';
import type { JobOutcome, JobRow } from '../queue/types.ts';
import type { JobHandler } from '../mail/worker-context.ts';
import type { ThreadRuntime } from './thread.ts';
import { createWaker, listenForJobs, onAbort } from '../queue/wake.ts';

const CLAIM_ERROR_PAUSE_MS = 1_000;

export async function runQueueLoop(runtime: ThreadRuntime, queue: QueueName, handler: JobHandler): Promise<void> {
  const { ctx, tuning, signal } = runtime;
  const { sequelize, log, workerId } = ctx;
  const inFlight = new Map<string, Promise<void>>();
  const waker = createWaker();
  onAbort(signal, () => waker.wake());
  const listener = runtime.embedded ? null : listenForJobs(runtime.data.databaseUrl, queue, waker, log);
  const pollMs = runtime.embedded ? tuning.embeddedPollMs : tuning.pollMs;

  const leaseTimer = setInterval(
    () => {
      const ids = [...inFlight.keys()];
      extendLease(sequelize, ids, workerId, tuning.leaseMs).then(
        (held) => {
          if (held.length < ids.length)
            log.warn({ lost: ids.filter((id) => !held.includes(id)) }, 'lost the lease of running jobs');
        },
        (error) => log.warn({ err: errorText(error) }, 'could not extend leases'),
      );
    },
    Math.max(50, Math.floor(tuning.leaseMs / 3)),
  );

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

  const run = async (job: JobRow) => {
    let outcome: JobOutcome;
    try {
      outcome = await handler(job, ctx);
    } catch (error) {
      // A handler that throws did not decide: treat it as transient and back off.
      outcome = { kind: 'retry', delayMs: backoffDelayMs(job.attempts, tuning.retryBaseMs), error: errorText(error) };
    }
    try {
      await record(job, outcome);
    } catch (error) {
      log.error(
        { job: job.id, err: errorText(error) },
        'could not record the outcome; the job runs again after its lease',
      );
    }
  };

  try {
    while (!signal.aborted) {
      const free = tuning.concurrency - inFlight.size;
      let claimed: JobRow[] = [];
      if (free > 0) {
        try {
          claimed = await claimJobs(sequelize, queue, workerId, Math.min(free, tuning.batchSize), tuning.leaseMs);
        } catch (error) {
          log.warn({ err: errorText(error) }, 'could not claim jobs; trying again shortly');
          await waker.wait(CLAIM_ERROR_PAUSE_MS);
          continue;
        }
        for (const job of claimed) {
          const running = run(job).finally(() => {
            inFlight.delete(job.id);
            waker.wake();
          });
          inFlight.set(job.id, running);
        }
      }
      // A full batch means more may be due: claim again at once. Otherwise sleep until woken.
      if (
        claimed.length > 0 &&
        claimed.length === Math.min(free, tuning.batchSize) &&
        inFlight.size < tuning.concurrency
      )
        continue;
      await waker.wait(pollMs);
    }
    if (inFlight.size > 0) {
      log.info({ running: inFlight.size }, 'draining in-flight jobs');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, tuning.drainTimeoutMs)));
      await Promise.race([Promise.allSettled(inFlight.values()), timeout]);
      clearTimeout(timer);
    }
  } finally {
    clearInterval(leaseTimer);
    await listener?.close();
  }
}
