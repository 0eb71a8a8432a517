// Worker thread: delivers signed webhook events (the delivery loop, claiming straight from
// webhook_deliveries) and runs the 'webhook' queue's other jobs (SNS subscription confirmations).
import { JOB_HANDLERS } from './handlers.ts';
import { runQueueLoop } from './queue-loop.ts';
import { runWorkerThread } from './thread.ts';
import { runDeliveryLoop } from '../modules/webhooks/delivery-loop.ts';

await runWorkerThread(async (runtime) => {
  const handler = await JOB_HANDLERS.webhook!();
  await Promise.all([runQueueLoop(runtime, 'webhook', handler), runDeliveryLoop(runtime)]);
});
