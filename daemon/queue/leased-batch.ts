// The leased-batch engine: the one way a worker thread takes rows from a table-backed queue and
// works them. Its users, each wired by a loop in jobs/: the send drain (jobs/send-loop.ts, one lane:
// the relay), the webhook dispatcher (modules/webhooks/dispatcher.ts, one lane per endpoint, run by
// jobs/webhook-loops.ts), the outbound MTA (jobs/mta-loop.ts, one lane per destination domain:
// mta/lane.ts) and the other queues' jobs (jobs/queue-loop.ts, one lane). It sits in queue/, below
// the modules that use it: it knows no module, only the functions its user hands it.
//
// What it does, the same for every user:
// - claim: one statement takes up to `claimBatch` rows under a lease (the user's SKIP LOCKED query),
//   told how much room each lane has so a slow lane's backlog stays in the table;
// - hold: a claimed item is held until its outcome is committed; every third of the lease the engine
//   extends the leases of what it holds (with `extendsAnswered` off, only of what has no answer yet);
// - lanes: items wait in their lane (`laneOf`) and start up to the lane's free slots; a paused lane's
//   waiting items are given back (`release`) until its pause ends; idle lanes are closed;
// - group commit: one `commit` statement at a time; outcomes that arrive meanwhile go in the next
//   one (a commit may linger `commitLingerMs` for more while items still run). A commit that throws
//   is tried again after `commitRetryMs`, its items still held; a user that would rather drop a bad
//   batch catches inside `commit`;
// - shutdown: `stop` gives back what waits, lets running items finish (at most `timeoutMs`) and
//   commits their outcomes. If the process dies instead, the leases run out and another worker takes
//   the rows again: delivery is at-least-once, duplicates bounded by what was held.
//
// The engine knows no SQL and no protocol: `claim`, `extend`, `release`, `run` and `commit` are the
// user's. `runLeasedBatchLoop` (leased-batch-loop.ts) is the claim loop a worker thread runs around an
// engine: claim while claims come back full, else sleep until the engine wants a claim, a NOTIFY, or the poll.
//
// Interface in short:
//   const engine = createLeasedBatchEngine({ claim, extend, release?, run, commit, idOf, laneOf,
//     newLane, …budgets });
//   await runLeasedBatchLoop(engine, { signal, waker, pollMs, … });   // or drive engine.claim() yourself
import { errorText } from '../errors.ts';
import type { Logger } from 'pino';

/** The items of one key (an endpoint, a destination, the relay) and how many of them may run at once. */
export interface Lane<Item> {
  readonly key: string;
  /** Items of this lane running now (the engine counts them). */
  inFlight: number;
  /** Claimed items waiting for a slot (the engine fills and drains it). */
  readonly waiting: Item[];
  /** When the engine last started one of its items (epoch ms). */
  lastUsedAt: number;
  /** When the lane's pause ends (epoch ms); in the past when it is not paused. */
  pausedUntil: number;
  /** Items that may start now. */
  freeSlots(now?: number): number;
  /** How many more items the next claim may take for this lane. */
  room(now?: number): number;
  paused(now?: number): boolean;
  /** Fewer items wait than one round of its slots: a claim would keep it busy. */
  runningLow(): boolean;
  /** Frees what the lane holds (connections); called when it is idle or at stop. */
  close(): void;
}

/** A lane with a fixed number of slots that never pauses (the send drain's relay). */
export class FixedLane<Item> implements Lane<Item> {
  inFlight = 0;
  readonly waiting: Item[] = [];
  lastUsedAt = Date.now();
  pausedUntil = 0;

  constructor(
    readonly key: string,
    readonly limit: number,
    /** Items it may keep waiting beyond its free slots. */
    readonly waitingCap = 0,
  ) {}

  freeSlots(): number {
    return Math.max(0, this.limit - this.inFlight);
  }

  room(): number {
    return Math.max(0, this.freeSlots() + this.waitingCap - this.waiting.length);
  }

  paused(): boolean {
    return false;
  }

  runningLow(): boolean {
    return this.waiting.length < this.limit;
  }

  close(): void {}
}

/** What a claim is told about the lanes: keys that may take nothing, and the room of the others. */
export interface LaneRooms {
  full: string[];
  rooms: Array<[key: string, room: number]>;
  /** Room of a key that has no lane yet. */
  otherRoom: number;
}

export interface Finished<Item, Outcome> {
  item: Item;
  outcome: Outcome;
}

export interface LeasedBatchOptions<Item, Outcome, L extends Lane<Item>> {
  log: Logger;
  /** What the items are, in log lines: 'send jobs', 'webhook deliveries'. */
  noun: string;
  /** How long a claim holds an item; extended every third of it while held. */
  leaseMs: number;
  /** Most items one claim takes. */
  claimBatch: number;
  /** Most items waiting in lanes or running at once. */
  maxActive: number;
  /** Most items held at once, answered-but-uncommitted ones included. */
  maxHeld: number;
  /** Claims stop while this many answered items wait for their commit. */
  maxAnswered: number;
  /** Whether an answered item's lease is still extended until its commit has run. */
  extendsAnswered: boolean;
  /** A claim pays off once it may take this many items: the engine asks for one from then on. */
  claimAt: number;
  /** Outcomes one commit takes at most. */
  commitBatchMax: number;
  /** While items still run and fewer than `commitLingerBelow` outcomes wait, a commit waits up to this long; 0: one tick. */
  commitLingerMs: number;
  commitLingerBelow: number;
  /** Pause before a commit that threw is tried again. */
  commitRetryMs: number;
  /** A lane unused this long (nothing waiting or running, not paused) is closed. */
  idleLaneMs: number;
  idOf(item: Item): string;
  laneOf(item: Item): string;
  newLane(key: string): L;
  /** Room of a key without a lane yet, told to the claim. */
  newLaneRoom: number;
  /** Claims up to `want` items under a lease, within each lane's room. */
  claim(want: number, lanes: LaneRooms): Promise<Item[]>;
  /** Extends the leases of these items; answers how many it still held. */
  extend(items: Item[]): Promise<number>;
  /** Gives back items never started, due again at `until` (or at once). Without it they wait for their lease. */
  release?(items: Item[], until?: Date): Promise<void>;
  /** Works one item. A throw leaves it to its lease (logged). */
  run(item: Item, lane: L): Promise<Outcome>;
  /** Records a batch of outcomes in one statement. A throw keeps them held and tries again. */
  commit(batch: Array<Finished<Item, Outcome>>): Promise<void>;
  /** Called when an idle lane is closed (a user's per-key caches). */
  onLaneClosed?(key: string): void;
}

export interface LeasedBatchEngine<Item, L extends Lane<Item>> {
  /** Claims what fits (up to the free room) and starts it; answers how many were claimed of how many asked. */
  claim(): Promise<{ claimed: number; requested: number }>;
  /** How many items a claim could take now. */
  room(): number;
  /** Whether a claim would take at least `claimAt` items now. */
  claimPaysOff(): boolean;
  /** Resolves when nothing is held and every outcome is committed. */
  idle(): Promise<void>;
  /** Called when a claim could pay off again (room freed, a lane ran low, a commit ran). */
  onWantsClaim(listener: () => void): void;
  /** Asks for a claim now (a retry falls due). */
  requestClaim(): void;
  lanes(): L[];
  /** Items held now (waiting, running, answered). */
  held(): number;
  /** Gives back what waits, lets what runs finish (at most `timeoutMs`) and commits it. */
  stop(timeoutMs: number): Promise<void>;
}

export function createLeasedBatchEngine<Item, Outcome, L extends Lane<Item>>(
  options: LeasedBatchOptions<Item, Outcome, L>,
): LeasedBatchEngine<Item, L> {
  const { log, noun } = options;
  const lanes = new Map<string, L>();
  const held = new Map<string, Item>();
  /** Held items whose outcome is in and waits for a commit. */
  const answered = new Set<string>();
  const toCommit: Array<Finished<Item, Outcome>> = [];
  let running = 0;
  let waiting = 0;
  let committing = false;
  let claiming = false;
  let stopping = false;
  let lingering: NodeJS.Timeout | null = null;
  let wantsClaim: () => void = () => {};
  const idleWaiters = new Set<() => void>();

  const isIdle = () => held.size === 0 && toCommit.length === 0 && !committing;
  const checkIdle = () => {
    if (!isIdle()) return;
    for (const resolve of idleWaiters) resolve();
    idleWaiters.clear();
  };

  const room = (): number => {
    if (stopping || answered.size >= options.maxAnswered) return 0;
    const active = running + waiting;
    return Math.max(
      0,
      Math.min(options.claimBatch, options.maxActive - active, options.maxHeld - active - answered.size),
    );
  };
  const maybeWantClaim = () => {
    if (!claiming && room() >= options.claimAt) wantsClaim();
  };

  const commitSoon = (now = false): void => {
    if (committing || toCommit.length === 0) return;
    if (!now && options.commitLingerMs > 0 && toCommit.length < options.commitLingerBelow && running > 0 && !stopping) {
      lingering ??= setTimeout(() => {
        lingering = null;
        commitSoon(true);
      }, options.commitLingerMs);
      return;
    }
    if (lingering) clearTimeout(lingering);
    lingering = null;
    committing = true;
    void (async () => {
      // One tick lets the answers that arrive together share the statement.
      if (options.commitLingerMs === 0) await new Promise((resolve) => setImmediate(resolve));
      const batch = toCommit.splice(0, options.commitBatchMax);
      try {
        await options.commit(batch);
        for (const { item } of batch) {
          const id = options.idOf(item);
          held.delete(id);
          answered.delete(id);
        }
      } catch (error) {
        // Still held: the leases keep them; try the statement again shortly.
        log.error({ err: errorText(error), outcomes: batch.length }, `could not commit ${noun}; trying again`);
        toCommit.unshift(...batch);
        await new Promise((resolve) => setTimeout(resolve, options.commitRetryMs));
      } finally {
        committing = false;
      }
      commitSoon();
      maybeWantClaim();
      checkIdle();
    })();
  };

  const releaseWaiting = (lane: L, until?: Date): Promise<void> => {
    const items = lane.waiting.splice(0);
    waiting -= items.length;
    // No longer ours from here on: the lease timer must not extend them while (or if) the release fails.
    for (const item of items) held.delete(options.idOf(item));
    if (items.length === 0 || !options.release) return Promise.resolve();
    return options
      .release(items, until)
      .catch((error) =>
        log.warn({ err: errorText(error) }, `could not give back waiting ${noun}; their leases will run out`),
      )
      .finally(checkIdle);
  };

  const start = async (lane: L, item: Item): Promise<void> => {
    let outcome: Outcome;
    try {
      outcome = await options.run(item, lane);
    } catch (error) {
      log.error({ err: errorText(error), item: options.idOf(item) }, `one of the ${noun} crashed; left to its lease`);
      held.delete(options.idOf(item));
      lane.inFlight -= 1;
      running -= 1;
      checkIdle();
      pump(lane);
      if (lane.runningLow()) maybeWantClaim();
      return;
    }
    lane.inFlight -= 1;
    running -= 1;
    answered.add(options.idOf(item));
    toCommit.push({ item, outcome });
    commitSoon();
    pump(lane);
    // Only a lane running low makes a claim pay off: one with a backlog waiting would claim a row or none, over and over.
    if (lane.runningLow()) maybeWantClaim();
  };

  const pump = (lane: L): void => {
    if (lane.paused()) {
      if (lane.waiting.length > 0) void releaseWaiting(lane, new Date(lane.pausedUntil));
      return;
    }
    while (lane.freeSlots() > 0 && lane.waiting.length > 0) {
      const item = lane.waiting.shift()!;
      waiting -= 1;
      running += 1;
      lane.inFlight += 1;
      lane.lastUsedAt = Date.now();
      void start(lane, item);
    }
  };

  const laneFor = (key: string): L => {
    let lane = lanes.get(key);
    if (!lane) lanes.set(key, (lane = options.newLane(key)));
    return lane;
  };

  const leaseTimer = setInterval(
    () => {
      const items = [...held.entries()]
        .filter(([id]) => options.extendsAnswered || !answered.has(id))
        .map(([, item]) => item);
      if (items.length > 0)
        options.extend(items).then(
          (kept) => {
            if (kept < items.length) log.warn({ lost: items.length - kept }, `lost the lease of held ${noun}`);
          },
          (error) => log.warn({ err: errorText(error) }, `could not extend the leases of ${noun}`),
        );
      const now = Date.now();
      for (const [key, lane] of lanes) {
        if (
          lane.inFlight === 0 &&
          lane.waiting.length === 0 &&
          now - lane.lastUsedAt > options.idleLaneMs &&
          !lane.paused(now)
        ) {
          lane.close();
          lanes.delete(key);
          options.onLaneClosed?.(key);
        } else if (lane.waiting.length > 0 && !lane.paused(now)) {
          pump(lane);
        }
      }
    },
    Math.max(50, Math.floor(options.leaseMs / 3)),
  );
  leaseTimer.unref();

  return {
    async claim() {
      const requested = room();
      if (requested <= 0) return { claimed: 0, requested: 0 };
      const now = Date.now();
      const rooms: LaneRooms = { full: [], rooms: [], otherRoom: options.newLaneRoom };
      for (const lane of lanes.values()) {
        const laneRoom = lane.room(now);
        if (laneRoom === 0) rooms.full.push(lane.key);
        else rooms.rooms.push([lane.key, laneRoom]);
      }
      claiming = true;
      let items: Item[];
      try {
        items = await options.claim(requested, rooms);
      } finally {
        claiming = false;
      }
      const touched = new Set<L>();
      for (const item of items) {
        held.set(options.idOf(item), item);
        const lane = laneFor(options.laneOf(item));
        lane.waiting.push(item);
        waiting += 1;
        touched.add(lane);
      }
      for (const lane of touched) pump(lane);
      return { claimed: items.length, requested };
    },
    room,
    claimPaysOff: () => room() >= options.claimAt,
    idle() {
      if (isIdle()) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.add(resolve));
    },
    onWantsClaim(listener) {
      wantsClaim = listener;
    },
    requestClaim() {
      if (!stopping) wantsClaim();
    },
    lanes() {
      return [...lanes.values()];
    },
    held() {
      return held.size;
    },
    async stop(timeoutMs) {
      stopping = true;
      await Promise.all([...lanes.values()].map((lane) => releaseWaiting(lane)));
      if (held.size > 0) log.info({ running: held.size }, `finishing the ${noun} in flight`);
      // Outcomes lingering for company are committed now.
      commitSoon(true);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.idle(), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
      clearInterval(leaseTimer);
      for (const lane of lanes.values()) lane.close();
      lanes.clear();
    },
  };
}
