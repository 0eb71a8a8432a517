// The webhook worker's body: the delivery loop (claiming straight from webhook_deliveries) beside
// the 'webhook' queue's other jobs (SNS subscription confirmations). Run by webhook-worker.ts (its
// own thread) or by background.ts (the shared thread).
import { JOB_HANDLERS } from './handlers.ts';
import { runQueueLoop } from './queue-loop.ts';
import type { ThreadRuntime } from './thread.ts';
import { runLeasedBatchLoop } from '../queue/leased-batch-loop.ts';
import { createWaker, listenOnChannel } from '../queue/wake.ts';
import { createDispatcher } from '../modules/webhooks/dispatcher.ts';
import { DELIVERIES_CHANNEL } from '../modules/webhooks/fan-out.ts';
import { countWebhookOutcome } from '../modules/metrics/count.ts';

/** Deliveries one claim statement takes at most. */
const DELIVERY_CLAIM_BATCH = 200;
/** Deliveries a thread holds at most (waiting in lanes plus in flight). */
const DELIVERY_MAX_HELD = 2_000;
/** Longest sleep between claims: retries and new deliveries are found within this. */
const DELIVERY_POLL_MS = 250;
/**
 * A claim that found nothing is not repeated sooner than this. One that found some but less than it
 * asked for (the lanes' rooms cut it) waits only for a lane to want more.
 */
const CLAIM_GAP_MS = 20;
const CLAIM_ERROR_PAUSE_MS = 1_000;
const NOUN = 'webhook deliveries';

export async function webhookWorkerBody(runtime: ThreadRuntime): Promise<void> {
  const handler = await JOB_HANDLERS.webhook!();
  await Promise.all([runQueueLoop(runtime, 'webhook', handler), runDeliveryLoop(runtime)]);
}

/**
 * The delivery lanes (modules/webhooks/dispatcher.ts) under the one claim loop: claim as soon as a lane
 * could use more work or new deliveries were written (NOTIFY on DELIVERIES_CHANNEL, fan-out.ts),
 * otherwise every poll; on shutdown, let attempts in flight finish, settle them and give back what waits.
 */
async function runDeliveryLoop(runtime: ThreadRuntime): Promise<void> {
  const { ctx, tuning, signal } = runtime;
  const dispatcher = createDispatcher(ctx, {
    workerId: ctx.workerId,
    leaseMs: tuning.leaseMs,
    claimBatch: DELIVERY_CLAIM_BATCH,
    maxHeld: DELIVERY_MAX_HELD,
    maxInFlightPerEndpoint: ctx.config.webhookMaxInFlightPerEndpoint,
    // Each settled outcome counts for this node's /metrics.
    onSettled: (outcome) => countWebhookOutcome(runtime.metrics, outcome),
  });
  const waker = createWaker();
  // The embedded PGlite does not deliver NOTIFY across connections: the poll serves there.
  const listener = runtime.embedded
    ? null
    : listenOnChannel(runtime.data.databaseUrl, DELIVERIES_CHANNEL, waker, ctx.log);
  try {
    await runLeasedBatchLoop(dispatcher, {
      signal,
      waker,
      log: ctx.log,
      noun: NOUN,
      pollMs: Math.min(DELIVERY_POLL_MS, runtime.embedded ? tuning.embeddedPollMs : tuning.pollMs),
      claimGapMs: CLAIM_GAP_MS,
      claimErrorPauseMs: CLAIM_ERROR_PAUSE_MS,
      drainTimeoutMs: tuning.drainTimeoutMs,
    });
  } finally {
    await listener?.close();
  }
}
