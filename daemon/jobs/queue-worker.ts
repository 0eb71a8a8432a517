// The body of send-worker, scheduler and webhook-worker: one queue, its handler from the registry.
import type { QueueName } from '../../shared/constants.ts';
import { JOB_HANDLERS } from './handlers.ts';
import { runQueueLoop } from './queue-loop.ts';
import { runWorkerThread, sleep } from './thread.ts';

export async function runQueueWorker(queue: QueueName): Promise<void> {
  await runWorkerThread(async (runtime) => {
    const load = JOB_HANDLERS[queue];
    if (!load) {
      // Stay up (the pool counts this thread alive) but leave the queue's jobs alone.
      runtime.ctx.log.info({ queue }, 'no handler registered for this queue yet; its jobs wait');
      while (!runtime.signal.aborted) await sleep(60_000, runtime.signal);
      return;
    }
    await runQueueLoop(runtime, queue, await load());
  });
}
