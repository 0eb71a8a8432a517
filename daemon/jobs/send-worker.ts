// Worker thread: delivers queued emails (queue "send"), and with DELIVERY=direct runs the outbound
// MTA's per-destination loop beside it (jobs/mta-loop.ts): the send loop spools, the MTA delivers.
import { runMtaLoop } from './mta-loop.ts';
import { queueWorkerBody } from './queue-worker.ts';
import { runWorkerThread } from './thread.ts';

await runWorkerThread(async (runtime) => {
  const sendBody = queueWorkerBody('send')(runtime);
  // Extra send threads (SEND_THREADS) leave the MTA loop to the first (jobs/index.ts).
  const runsMta = runtime.data.config.delivery === 'direct' && runtime.data.options.mta !== false;
  await Promise.all(runsMta ? [sendBody, runMtaLoop(runtime)] : [sendBody]);
});
