// The webhook worker's dispatcher, on the leased-batch engine (queue/leased-batch.ts; the claim loop
// around it is wired in jobs/webhook-loops.ts). It claims due deliveries in batches (SKIP LOCKED,
// leased), sorts them into one lane per endpoint, and starts each lane's attempts up to that lane's
// adaptive limit (endpoint-lane.ts). Outcomes are settled in batches: whatever finished while the
// previous settle statement ran goes in the next one.
//
// Nothing is shared between endpoints but the claim statement, and it gives each lane only its own
// room (free slots plus a small waiting allowance): a slow endpoint's backlog stays in the table
// instead of filling the worker's budget, a dead one pauses its lane. The worker's budget
// (maxHeld) counts deliveries waiting or in flight; an answered delivery leaves it at once, before
// its outcome is settled, so a slow settle statement or the mail about a disabled endpoint never
// stops the other lanes from claiming (answered-but-unsettled ones are bounded on their own).
import type { Logger } from 'pino';
import { unseal } from '../../crypto/sealed.ts';
import { attemptOnce, skippedOutcome, type ClaimedDelivery, type DeliveryOutcome } from './attempt.ts';
import { settleOutcomes, type DeliveryDeps } from './delivery.ts';
import { claimDeliveries, extendDeliveryLeases, releaseDeliveries } from './sql/delivery-store.ts';
import { createLeasedBatchEngine } from '../../queue/leased-batch.ts';
import { EndpointLane, newLaneRoom } from './endpoint-lane.ts';

export interface DispatcherOptions {
  workerId: string;
  /** How long a claim holds a delivery before another worker may take it (extended while held). */
  leaseMs: number;
  /** Most deliveries one claim takes. */
  claimBatch: number;
  /** Most deliveries held at once waiting in lanes plus in flight (and, apart, answered but not settled). */
  maxHeld: number;
  /** Ceiling of any one endpoint's attempts in flight (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT). */
  maxInFlightPerEndpoint: number;
  /** Called with every outcome once it is settled (tests, benchmarks). */
  onSettled?: (outcome: DeliveryOutcome) => void;
}

export interface Dispatcher {
  /** Claims what is due (up to the free room) and starts it; answers how many were claimed. */
  claim(): Promise<{ claimed: number; requested: number }>;
  /** Whether a claim would take anything now. */
  claimPaysOff(): boolean;
  /** Resolves when nothing is held and every outcome is settled. */
  idle(): Promise<void>;
  /** Called when a claim could pay off again (a lane ran dry, room freed, a retry fell due). */
  onWantsClaim(listener: () => void): void;
  /** Every endpoint's current limit and attempts in flight (diagnostics, tests). */
  lanes(): Array<{ endpointId: string; limit: number; inFlight: number; waiting: number; pausedUntil: number }>;
  /** Waits for attempts in flight (at most `timeoutMs`), settles them, gives back what waits. */
  stop(timeoutMs: number): Promise<void>;
}

const IDLE_LANE_MS = 60_000;
/** Pause before a settle statement that failed is tried again (the deliveries stay held). */
const SETTLE_RETRY_MS = 500;

export function createDispatcher(deps: DeliveryDeps & { log: Logger }, options: DispatcherOptions): Dispatcher {
  const { sql, log } = deps;
  const { workerId } = options;
  const secrets = new Map<string, { sealed: string; plain: string }>();

  const secretOf = (delivery: ClaimedDelivery): string => {
    const cached = secrets.get(delivery.endpointId);
    if (cached?.sealed === delivery.secretEncrypted) return cached.plain;
    const plain = unseal(deps.secrets.encryptionKey, delivery.secretEncrypted);
    secrets.set(delivery.endpointId, { sealed: delivery.secretEncrypted, plain });
    return plain;
  };

  const attempt = async (delivery: ClaimedDelivery, lane: EndpointLane<ClaimedDelivery>): Promise<DeliveryOutcome> => {
    const outcome =
      !delivery.enabled && delivery.eventType !== 'test'
        ? skippedOutcome(delivery)
        : await attemptOnce(delivery, {
            config: deps.config,
            secret: secretOf(delivery),
            target: () => lane.checkedTarget(delivery.url, deps.config),
            agent: (target) => lane.agentFor(target),
          });
    lane.observe(outcome.answer);
    if (outcome.pauseUntil) lane.pause(outcome.pauseUntil.getTime());
    return outcome;
  };

  const engine = createLeasedBatchEngine<ClaimedDelivery, DeliveryOutcome, EndpointLane<ClaimedDelivery>>({
    log,
    noun: 'webhook deliveries',
    leaseMs: options.leaseMs,
    claimBatch: options.claimBatch,
    maxActive: options.maxHeld,
    // Answered deliveries leave the budget at once (a slow settle statement never stops the lanes)
    // and are bounded on their own.
    maxHeld: Infinity,
    maxAnswered: options.maxHeld,
    extendsAnswered: false,
    claimAt: 1,
    commitBatchMax: Infinity,
    commitLingerMs: 0,
    commitLingerBelow: 0,
    commitRetryMs: SETTLE_RETRY_MS,
    idleLaneMs: IDLE_LANE_MS,
    idOf: (delivery) => delivery.id,
    laneOf: (delivery) => delivery.endpointId,
    newLane: (endpointId) => new EndpointLane<ClaimedDelivery>(endpointId, options.maxInFlightPerEndpoint),
    newLaneRoom: newLaneRoom(options.maxInFlightPerEndpoint),
    claim: (want, lanes) => claimDeliveries(sql, workerId, want, options.leaseMs, lanes),
    extend: async (held) => (await extendDeliveryLeases(sql, held, workerId, options.leaseMs)).length,
    release: async (waiting, until) => {
      await releaseDeliveries(sql, waiting, workerId, until ?? null);
    },
    run: attempt,
    commit: async (batch) => {
      const outcomes = batch.map(({ outcome }) => outcome);
      const { settled } = await settleOutcomes(deps, workerId, outcomes);
      if (settled < outcomes.length)
        log.warn(
          { lost: outcomes.length - settled },
          'webhook outcomes arrived after their lease was lost; the new holder decides',
        );
      for (const outcome of outcomes) {
        options.onSettled?.(outcome);
        // A retry due before the next poll is claimed on time.
        if (outcome.delayMs !== null) setTimeout(() => engine.requestClaim(), outcome.delayMs + 5).unref();
      }
    },
    onLaneClosed: (endpointId) => secrets.delete(endpointId),
  });

  return {
    claim: () => engine.claim(),
    claimPaysOff: () => engine.claimPaysOff(),
    idle: () => engine.idle(),
    onWantsClaim: (listener) => engine.onWantsClaim(listener),
    lanes() {
      return engine.lanes().map((lane) => ({
        endpointId: lane.endpointId,
        limit: lane.limit,
        inFlight: lane.inFlight,
        waiting: lane.waiting.length,
        pausedUntil: lane.pausedUntil,
      }));
    },
    stop: (timeoutMs) => engine.stop(timeoutMs),
  };
}
