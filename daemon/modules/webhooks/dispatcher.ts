// The webhook worker's delivery engine. It claims due deliveries in batches (SKIP LOCKED, leased),
// sorts them into one lane per endpoint, and starts each lane's attempts up to that lane's adaptive
// limit (endpoint-lane.ts). Outcomes are settled in batches: whatever finished while the previous
// settle statement ran goes in the next one.
//
// Nothing is shared between endpoints but the claim statement, and it gives each lane only its own
// room (free slots plus a small waiting allowance): a slow endpoint's backlog stays in the table
// instead of filling the worker's budget, a dead one pauses its lane. The worker's budget
// (maxHeld) counts deliveries waiting or in flight; an answered delivery leaves it at once, before
// its outcome is settled, so a slow settle statement or the mail about a disabled endpoint never
// stops the other lanes from claiming (answered-but-unsettled ones are bounded on their own).
import type { Logger } from 'pino';
import { unseal } from '../../crypto/sealed.ts';
import { attemptOnce, skippedOutcome, type DeliveryOutcome } from './attempt.ts';
import { settleOutcomes, type DeliveryDeps } from './delivery.ts';
import {
  claimDeliveries,
  extendDeliveryLeases,
  releaseDeliveries,
  type ClaimedDelivery,
  type DeliveryKey,
} from './delivery-store.ts';
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

export function createDispatcher(deps: DeliveryDeps & { log: Logger }, options: DispatcherOptions): Dispatcher {
  const { sql, log } = deps;
  const { workerId } = options;
  const lanes = new Map<string, EndpointLane<ClaimedDelivery>>();
  const secrets = new Map<string, { sealed: string; plain: string }>();
  /** Held deliveries by id, with their created_at (the rest of their primary key). */
  const held = new Map<string, string>();
  /** Held deliveries whose answer is in and waits to be settled: their leases are not extended. */
  const answered = new Set<string>();
  let unsettled: DeliveryOutcome[] = [];
  let settling: Promise<void> | null = null;
  let wantsClaim: () => void = () => {};
  let stopping = false;
  const idleWaiters = new Set<() => void>();

  const isIdle = () => held.size === 0 && unsettled.length === 0 && settling === null;
  const checkIdle = () => {
    if (!isIdle()) return;
    for (const resolve of idleWaiters) resolve();
    idleWaiters.clear();
  };

  const secretOf = (delivery: ClaimedDelivery): string => {
    const cached = secrets.get(delivery.endpointId);
    if (cached?.sealed === delivery.secretEncrypted) return cached.plain;
    const plain = unseal(deps.secrets.encryptionKey, delivery.secretEncrypted);
    secrets.set(delivery.endpointId, { sealed: delivery.secretEncrypted, plain });
    return plain;
  };

  const settleSoon = () => {
    if (settling || unsettled.length === 0) return;
    settling = (async () => {
      // One tick lets the answers that arrive together share the statement.
      await new Promise((resolve) => setImmediate(resolve));
      const batch = unsettled;
      unsettled = [];
      try {
        const { settled } = await settleOutcomes(deps, workerId, batch);
        if (settled < batch.length)
          log.warn(
            { lost: batch.length - settled },
            'webhook outcomes arrived after their lease was lost; the new holder decides',
          );
        for (const outcome of batch) {
          held.delete(outcome.deliveryId);
          answered.delete(outcome.deliveryId);
          options.onSettled?.(outcome);
          // A retry due before the next poll is claimed on time.
          if (outcome.delayMs !== null) setTimeout(() => wantsClaim(), outcome.delayMs + 5).unref();
        }
      } catch (error) {
        // Still held: the leases keep them; try the statement again shortly.
        log.error(
          { err: error instanceof Error ? error.message : String(error), outcomes: batch.length },
          'could not settle webhook outcomes; trying again',
        );
        unsettled = batch.concat(unsettled);
        await new Promise((resolve) => setTimeout(resolve, 500));
      } finally {
        settling = null;
      }
      settleSoon();
      if (!stopping) wantsClaim();
      checkIdle();
    })();
  };

  const finish = (outcome: DeliveryOutcome) => {
    answered.add(outcome.deliveryId);
    unsettled.push(outcome);
    settleSoon();
  };

  const releasePaused = (lane: EndpointLane<ClaimedDelivery>) => {
    const keys: DeliveryKey[] = lane.waiting.splice(0).map(({ id, createdAt }) => ({ id, createdAt }));
    // No longer ours from here on: the lease timer must not extend them while (or if) the release fails.
    keys.forEach(({ id }) => held.delete(id));
    releaseDeliveries(sql, keys, workerId, new Date(lane.pausedUntil))
      .catch((error: Error) =>
        log.warn(
          { err: error.message },
          'could not give back the deliveries of a paused endpoint; their leases will run out',
        ),
      )
      .finally(checkIdle);
  };

  const pump = (lane: EndpointLane<ClaimedDelivery>) => {
    if (lane.paused()) {
      if (lane.waiting.length > 0) releasePaused(lane);
      return;
    }
    while (lane.freeSlots() > 0 && lane.waiting.length > 0) {
      const delivery = lane.waiting.shift()!;
      lane.inFlight += 1;
      lane.lastUsedAt = Date.now();
      void run(lane, delivery);
    }
    if (lane.waiting.length < Math.floor(lane.limit) && !stopping) wantsClaim();
  };

  const run = async (lane: EndpointLane<ClaimedDelivery>, delivery: ClaimedDelivery) => {
    let outcome: DeliveryOutcome;
    try {
      outcome =
        !delivery.enabled && delivery.eventType !== 'test'
          ? skippedOutcome(delivery)
          : await attemptOnce(delivery, {
              config: deps.config,
              secret: secretOf(delivery),
              target: () => lane.checkedTarget(delivery.url, deps.config),
              agent: (target) => lane.agentFor(target),
            });
    } catch (error) {
      // Not an answer of the receiver (attemptOnce catches those): leave it to the lease.
      log.error(
        { err: error instanceof Error ? error.message : String(error), delivery: delivery.id },
        'webhook attempt crashed',
      );
      held.delete(delivery.id);
      lane.inFlight -= 1;
      checkIdle();
      pump(lane);
      return;
    }
    lane.inFlight -= 1;
    lane.observe(outcome.answer);
    if (outcome.pauseUntil) lane.pause(outcome.pauseUntil.getTime());
    finish(outcome);
    pump(lane);
  };

  const leaseTimer = setInterval(
    () => {
      const keys = [...held].filter(([id]) => !answered.has(id)).map(([id, createdAt]) => ({ id, createdAt }));
      extendDeliveryLeases(sql, keys, workerId, options.leaseMs).then(
        (kept) => {
          if (kept.length < keys.length)
            log.warn({ lost: keys.length - kept.length }, 'lost the lease of held webhook deliveries');
        },
        (error: Error) => log.warn({ err: error.message }, 'could not extend webhook delivery leases'),
      );
      const now = Date.now();
      for (const [id, lane] of lanes) {
        if (
          lane.inFlight === 0 &&
          lane.waiting.length === 0 &&
          now - lane.lastUsedAt > IDLE_LANE_MS &&
          !lane.paused(now)
        ) {
          lane.close();
          lanes.delete(id);
          secrets.delete(id);
        } else if (lane.waiting.length > 0 && !lane.paused(now)) {
          pump(lane);
        }
      }
    },
    Math.max(50, Math.floor(options.leaseMs / 3)),
  );
  leaseTimer.unref();

  const laneOf = (endpointId: string) => {
    let lane = lanes.get(endpointId);
    if (!lane)
      lanes.set(endpointId, (lane = new EndpointLane<ClaimedDelivery>(endpointId, options.maxInFlightPerEndpoint)));
    return lane;
  };

  return {
    async claim() {
      const requested = Math.min(options.claimBatch, options.maxHeld - (held.size - answered.size));
      if (stopping || requested <= 0 || answered.size >= options.maxHeld) return { claimed: 0, requested: 0 };
      const now = Date.now();
      const full: string[] = [];
      const rooms: Array<[string, number]> = [];
      for (const lane of lanes.values()) {
        const room = lane.room(now);
        if (room === 0) full.push(lane.endpointId);
        else rooms.push([lane.endpointId, room]);
      }
      const claimed = await claimDeliveries(sql, workerId, requested, options.leaseMs, {
        full,
        rooms,
        otherRoom: newLaneRoom(options.maxInFlightPerEndpoint),
      });
      const touched = new Set<EndpointLane<ClaimedDelivery>>();
      for (const delivery of claimed) {
        held.set(delivery.id, delivery.createdAt);
        const lane = laneOf(delivery.endpointId);
        lane.waiting.push(delivery);
        touched.add(lane);
      }
      for (const lane of touched) pump(lane);
      return { claimed: claimed.length, requested };
    },
    idle() {
      if (isIdle()) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.add(resolve));
    },
    onWantsClaim(listener) {
      wantsClaim = listener;
    },
    lanes() {
      return [...lanes.values()].map((lane) => ({
        endpointId: lane.endpointId,
        limit: lane.limit,
        inFlight: lane.inFlight,
        waiting: lane.waiting.length,
        pausedUntil: lane.pausedUntil,
      }));
    },
    async stop(timeoutMs) {
      stopping = true;
      const waiting: DeliveryKey[] = [];
      for (const lane of lanes.values())
        waiting.push(...lane.waiting.splice(0).map(({ id, createdAt }) => ({ id, createdAt })));
      if (waiting.length > 0) {
        await releaseDeliveries(sql, waiting, workerId).catch((error: Error) =>
          log.warn({ err: error.message }, 'could not give back waiting webhook deliveries'),
        );
        waiting.forEach(({ id }) => held.delete(id));
      }
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.idle(), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
      clearInterval(leaseTimer);
      for (const lane of lanes.values()) lane.close();
      lanes.clear();
    },
  };
}
