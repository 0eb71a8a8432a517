// Worker thread: delivers queued emails (queue "send"), and with DELIVERY=direct runs the outbound
// MTA's per-destination loop beside it (jobs/mta-loop.ts): the send loop spools, the MTA delivers.
import { runMtaLoop } from './mta-loop.ts';
import { queueWorkerBody } from './queue-worker.ts';
import { runWorkerThread } from './thread.ts';

await runWorkerThread(async (runtime) => {
  const sendBody = queueWorkerBody('send')(runtime);
  await Promise.all(runtime.data.config.delivery === 'direct' ? [sendBody, runMtaLoop(runtime)] : [sendBody]);
});
