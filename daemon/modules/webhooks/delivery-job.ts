// The 'webhook' queue's handler. Webhook deliveries are no longer jobs (the webhook worker claims
// them from webhook_deliveries, see dispatcher.ts); the queue still carries the SES receiver's SNS
// subscription confirmations (inbound/sns-confirm.ts), outbound HTTP calls too. A delivery job left
// by an older daemon only makes its delivery due now.
import type { JobHandler } from '../../mail/worker-context.ts';
import { runSnsConfirmation, SNS_CONFIRM_JOB } from '../inbound/sns-confirm.ts';
import { makeQueuedDeliveryDue } from './sql/deliveries.ts';

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const handleWebhookJob: JobHandler = async (job, ctx) => {
  if (job.payload.kind === SNS_CONFIRM_JOB) return runSnsConfirmation(job.payload, job.attempts, ctx);
  const deliveryId = job.payload.deliveryId;
  if (typeof deliveryId !== 'string' || !UUID_PATTERN.test(deliveryId)) {
    return { kind: 'fail', error: `webhook job ${job.id} has no valid deliveryId in its payload` };
  }
  await makeQueuedDeliveryDue(ctx.sequelize, deliveryId);
  return { kind: 'done' };
};
