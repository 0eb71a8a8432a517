// A worker thread for the queue tests: the real thread runtime and loop with a handler that records
// each run in queue_test_runs. The payload steers it: `crashOnFirstAttempt` ends the thread in the
// middle of the job (as a fatal error would), `hangOnFirstAttempt` never
// finishes its first run.
import { QueryTypes } from 'sequelize';
import { runQueueLoop } from '../../daemon/jobs/queue-loop.ts';
import { runWorkerThread, sleep } from '../../daemon/jobs/thread.ts';
import type { JobHandler } from '../../daemon/mail/worker-context.ts';
import type { QueueName } from '../../shared/constants.ts';

const recordRun: JobHandler = async (job, ctx) => {
  if (job.payload.hangOnFirstAttempt && job.attempts === 0) await new Promise(() => {});
  await sleep(Number(job.payload.workMs ?? 2));
  if (job.payload.crashOnFirstAttempt && job.attempts === 0) {
    await sleep(50);
    process.exit(1);
  }
  await ctx.sequelize.query(`INSERT INTO queue_test_runs (n, worker, attempts) VALUES (:n, :worker, :attempts)`, {
    replacements: { n: job.payload.n, worker: ctx.workerId, attempts: job.attempts },
    type: QueryTypes.INSERT,
  });
  return { kind: 'done' };
};

await runWorkerThread(async (runtime) => {
  await runQueueLoop(runtime, runtime.data.options.queue as QueueName, recordRun);
});
