// The webhook worker's body: the delivery loop (claiming straight from webhook_deliveries) beside
// the 'webhook' queue's other jobs (SNS subscription confirmations). Run by webhook-worker.ts (its
// own thread) or by background.ts (the shared thread).
import { JOB_HANDLERS } from './handlers.ts';
import { runQueueLoop } from './queue-loop.ts';
import type { ThreadRuntime } from './thread.ts';
import { runDeliveryLoop } from '../modules/webhooks/delivery-loop.ts';

export async function webhookWorkerBody(runtime: ThreadRuntime): Promise<void> {
  const handler = await JOB_HANDLERS.webhook!();
  await Promise.all([runQueueLoop(runtime, 'webhook', handler), runDeliveryLoop(runtime)]);
}
