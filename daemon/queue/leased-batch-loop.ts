// The claim loop a worker thread runs around a leased-batch engine (leased-batch.ts): claim while
// claims come back full and a claim still pays off, else sleep until the engine wants a claim, a
// NOTIFY wakes the loop, or the poll runs out. On abort it stops the engine (gives back what waits,
// lets what runs finish and commits it).
import { errorText } from '../errors.ts';
import type { Logger } from 'pino';
import { type Lane, type LeasedBatchEngine } from './leased-batch.ts';
import { onAbort, type Waker } from './wake.ts';

export interface LeasedBatchLoopOptions {
  signal: AbortSignal;
  waker: Waker;
  log: Logger;
  noun: string;
  /** Longest sleep between claims when nothing wakes the loop. */
  pollMs: number;
  /** After a claim that found nothing, the next waits at least this long. */
  claimGapMs: number;
  /**
   * After a claim that did not fill (nothing more was due), a wake-up waits this long before the next
   * claim, so that what arrives meanwhile is claimed in one statement (0: claim at once).
   */
  wakeLingerMs?: number;
  claimErrorPauseMs: number;
  /** On shutdown, how long running items may take. */
  drainTimeoutMs: number;
}

/** What the loop drives: an engine, or a user's face of one (the webhook dispatcher). */
export type ClaimingEngine = Pick<
  LeasedBatchEngine<unknown, Lane<unknown>>,
  'claim' | 'claimPaysOff' | 'onWantsClaim' | 'stop'
>;

/** Claims while claims come back full and room is left; else sleeps until woken or the poll. Stops the engine on abort. */
export async function runLeasedBatchLoop(engine: ClaimingEngine, options: LeasedBatchLoopOptions): Promise<void> {
  const { signal, waker } = options;
  engine.onWantsClaim(() => waker.wake());
  // One shared abort listener per signal (wake.ts): every loop of a thread adds its own callback.
  const stopListening = onAbort(signal, () => waker.wake());
  try {
    while (!signal.aborted) {
      let result: { claimed: number; requested: number };
      try {
        result = await engine.claim();
      } catch (error) {
        options.log.warn({ err: errorText(error) }, `could not claim ${options.noun}; trying again shortly`);
        await waker.wait(options.claimErrorPauseMs);
        continue;
      }
      // A full claim means more may be due: claim again at once while there is room.
      if (result.requested > 0 && result.claimed === result.requested && engine.claimPaysOff()) continue;
      if (result.claimed === 0 && options.claimGapMs > 0)
        await new Promise((resolve) => setTimeout(resolve, options.claimGapMs));
      await waker.wait(options.pollMs);
      if (options.wakeLingerMs && !signal.aborted)
        await new Promise((resolve) => setTimeout(resolve, options.wakeLingerMs));
    }
  } finally {
    stopListening();
    await engine.stop(options.drainTimeoutMs);
  }
}
