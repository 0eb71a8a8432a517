// The webhook worker thread's delivery loop: claim as soon as a lane could use more work (the
// dispatcher says so) or new deliveries were written (NOTIFY on DELIVERIES_CHANNEL, fan-out.ts),
// otherwise every poll; on shutdown, let attempts in flight finish, settle
// them and give back what was still waiting.
import { errorText } from '../../errors.ts';
import { onAbort, type ThreadRuntime } from '../../jobs/thread.ts';
import { createWaker, listenOnChannel } from '../../jobs/wake.ts';
import { DELIVERIES_CHANNEL } from './fan-out.ts';
import { createDispatcher, type DispatcherOptions } from './dispatcher.ts';
import { countWebhookOutcome } from '../metrics/count.ts';

/** Deliveries one claim statement takes at most. */
export const DELIVERY_CLAIM_BATCH = 200;
/** Deliveries a thread holds at most (waiting in lanes plus in flight). */
export const DELIVERY_MAX_HELD = 2_000;
/** Longest sleep between claims: retries and new deliveries are found within this. */
const DELIVERY_POLL_MS = 250;
/**
 * A claim that found nothing is not repeated sooner than this. One that found some but less than it
 * asked for (the lanes' rooms cut it) waits only for a lane to want more.
 */
const CLAIM_GAP_MS = 20;
const CLAIM_ERROR_PAUSE_MS = 1_000;

export async function runDeliveryLoop(
  runtime: ThreadRuntime,
  overrides: Partial<DispatcherOptions> = {},
): Promise<void> {
  const { ctx, tuning, signal } = runtime;
  const dispatcher = createDispatcher(ctx, {
    workerId: ctx.workerId,
    leaseMs: tuning.leaseMs,
    claimBatch: DELIVERY_CLAIM_BATCH,
    maxHeld: DELIVERY_MAX_HELD,
    maxInFlightPerEndpoint: ctx.config.webhookMaxInFlightPerEndpoint,
    ...overrides,
    // Each settled outcome counts for this node's /metrics (and still reaches a caller's own hook).
    onSettled: (outcome) => {
      countWebhookOutcome(runtime.metrics, outcome);
      overrides.onSettled?.(outcome);
    },
  });
  const waker = createWaker();
  dispatcher.onWantsClaim(() => waker.wake());
  onAbort(signal, () => waker.wake());
  // The embedded PGlite does not deliver NOTIFY across connections: the poll serves there.
  const listener = runtime.embedded
    ? null
    : listenOnChannel(runtime.data.databaseUrl, DELIVERIES_CHANNEL, waker, ctx.log);
  const pollMs = Math.min(DELIVERY_POLL_MS, runtime.embedded ? tuning.embeddedPollMs : tuning.pollMs);

  while (!signal.aborted) {
    let result: { claimed: number; requested: number };
    try {
      result = await dispatcher.claim();
    } catch (error) {
      ctx.log.warn({ err: errorText(error) }, 'could not claim webhook deliveries; trying again shortly');
      await waker.wait(CLAIM_ERROR_PAUSE_MS);
      continue;
    }
    if (result.requested > 0 && result.claimed === result.requested) continue;
    if (result.claimed === 0) await new Promise((resolve) => setTimeout(resolve, CLAIM_GAP_MS));
    await waker.wait(pollMs);
  }
  await listener?.close();
  await dispatcher.stop(tuning.drainTimeoutMs);
}
