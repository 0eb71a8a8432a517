// The body of send-worker, scheduler and webhook-worker: one queue, its handler from the registry.
// (The shared background thread runs several of these bodies side by side: background.ts.)
import type { QueueName } from '../../shared/constants.ts';
import { JOB_HANDLERS, QUEUE_LOOPS } from './handlers.ts';
import { runQueueLoop } from './queue-loop.ts';
import { runWorkerThread, sleep, type ThreadRuntime } from './thread.ts';
import { configuredLease, type QueueTuning } from './tuning.ts';

/** Works one queue until shutdown: the whole of a separate thread, or one loop of the shared one. */
export function queueWorkerBody(
  queue: QueueName,
  tuning: Partial<QueueTuning> = {},
): (runtime: ThreadRuntime) => Promise<void> {
  return async (threadRuntime) => {
    // A loop's own tuning over the thread's (the campaign loop in the shared thread).
    const runtime = {
      ...threadRuntime,
      tuning: { ...threadRuntime.tuning, ...tuning, ...configuredLease(threadRuntime.data.config) },
    };
    const loop = QUEUE_LOOPS[queue];
    if (loop) return (await loop())(runtime);
    const load = JOB_HANDLERS[queue];
    if (!load) {
      // Stay up (the pool counts this thread alive) but leave the queue's jobs alone.
      runtime.ctx.log.info({ queue }, 'no handler registered for this queue yet; its jobs wait');
      while (!runtime.signal.aborted) await sleep(60_000, runtime.signal);
      return;
    }
    await runQueueLoop(runtime, queue, await load());
  };
}

export async function runQueueWorker(queue: QueueName): Promise<void> {
  await runWorkerThread(queueWorkerBody(queue));
}
