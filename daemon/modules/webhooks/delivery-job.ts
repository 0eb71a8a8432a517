// The 'webhook' queue's handler: one job = one delivery; each run makes one attempt.
// (It also runs the SES receiver's SNS subscription confirmations, see inbound/sns-confirm.ts.)
// Per-endpoint limit: a worker keeps at most MAX_IN_FLIGHT_PER_ENDPOINT attempts open to the same
// endpoint. A job for a full endpoint does not wait for a slot (that would hold one of the worker's
// job slots and so delay other endpoints' jobs): it goes back to the queue for a short while. The
// real attempt count lives on the delivery row, so these "busy" runs cost the delivery nothing.
import type { JobHandler } from '../../queue/types.ts';
import { attemptDelivery } from './delivery.ts';
import { WebhookDeliveryRecord } from './model.ts';
import { runSnsConfirmation, SNS_CONFIRM_JOB } from '../inbound/sns-confirm.ts';

export const MAX_IN_FLIGHT_PER_ENDPOINT = 2;
const BUSY_RETRY_MS = 1000;

const inFlight = new Map<string, number>();

function tryAcquire(endpointId: string): boolean {
  const current = inFlight.get(endpointId) ?? 0;
  if (current >= MAX_IN_FLIGHT_PER_ENDPOINT) return false;
  inFlight.set(endpointId, current + 1);
  return true;
}

function release(endpointId: string): void {
  const current = (inFlight.get(endpointId) ?? 1) - 1;
  if (current <= 0) inFlight.delete(endpointId);
  else inFlight.set(endpointId, current);
}

/** Attempts currently open per endpoint in this thread (tests, diagnostics). */
export function endpointsInFlight(): ReadonlyMap<string, number> {
  return inFlight;
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const handleWebhookJob: JobHandler = async (job, ctx) => {
  // The SES receiver's subscription confirmations share this queue: both are outbound HTTP calls.
  if (job.payload.kind === SNS_CONFIRM_JOB) return runSnsConfirmation(job.payload, job.attempts, ctx);
  const deliveryId = job.payload.deliveryId;
  if (typeof deliveryId !== 'string' || !UUID_PATTERN.test(deliveryId)) {
    return { kind: 'fail', error: `webhook job ${job.id} has no valid deliveryId in its payload` };
  }
  const delivery = await WebhookDeliveryRecord.findByPk(deliveryId, { attributes: ['id', 'endpointId'] });
  if (!delivery) return { kind: 'done' };
  if (!tryAcquire(delivery.endpointId)) {
    // Jitter so that a backlog for one endpoint does not come back as one wave.
    return { kind: 'retry', delayMs: BUSY_RETRY_MS * (0.5 + Math.random()), error: 'endpoint busy: waiting for a free slot' };
  }
  try {
    const result = await attemptDelivery({ sequelize: ctx.sequelize, config: ctx.config, secrets: ctx.secrets, log: ctx.log }, deliveryId);
    switch (result.kind) {
      case 'succeeded':
      case 'skipped':
        return { kind: 'done' };
      case 'retry':
        return { kind: 'retry', delayMs: result.delayMs, error: result.error };
      case 'failed':
        return { kind: 'fail', error: result.error };
    }
  } finally {
    release(delivery.endpointId);
  }
};
