// The leased-batch engine (daemon/queue/leased-batch.ts) on its own, with fake claim, extend, release,
// run and commit functions: lanes bound what runs per key, outcomes are committed in groups one
// statement at a time, a failed commit keeps its items held and is tried again, a crash is left to
// the lease, a paused lane gives its waiting items back, and stop gives back what waits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pino from 'pino';
import {
  createLeasedBatchEngine,
  FixedLane,
  type Finished,
  type LaneRooms,
  type LeasedBatchOptions,
} from '../daemon/queue/leased-batch.ts';
import { runLeasedBatchLoop } from '../daemon/queue/leased-batch-loop.ts';
import { createWaker } from '../daemon/queue/wake.ts';
import { waitFor } from './helpers/wait.ts';

interface Item {
  id: string;
  lane: string;
}

/** A lane that can be paused by hand (the engine's contract, as EndpointLane keeps it). */
class PausableLane extends FixedLane<Item> {
  override pausedUntil = 0;
  override paused(now = Date.now()): boolean {
    return this.pausedUntil > now;
  }
  override freeSlots(now = Date.now()): number {
    return this.paused(now) ? 0 : super.freeSlots();
  }
  override room(now = Date.now()): number {
    return this.paused(now) ? 0 : super.room();
  }
}

/** A fake queue: `backlog` items due, claims take from it, commits record outcomes by id. */
function fakeQueue(count: number, lanes: string[]) {
  const backlog: Item[] = Array.from({ length: count }, (_, i) => ({ id: `i${i}`, lane: lanes[i % lanes.length] }));
  const state = {
    backlog,
    committed: new Map<string, number>(),
    commitSizes: [] as number[],
    committing: 0,
    maxCommitting: 0,
    released: [] as Array<{ ids: string[]; until?: Date }>,
    extended: [] as string[][],
    claims: [] as Array<{ want: number; lanes: LaneRooms }>,
    running: new Map<string, number>(),
    maxRunning: new Map<string, number>(),
  };
  return state;
}

type Queue = ReturnType<typeof fakeQueue>;

function engineOn(queue: Queue, overrides: Partial<LeasedBatchOptions<Item, string, PausableLane>> = {}) {
  const log = pino({ level: 'silent' });
  return createLeasedBatchEngine<Item, string, PausableLane>({
    log,
    noun: 'test items',
    leaseMs: 60_000,
    claimBatch: 10,
    maxActive: 20,
    maxHeld: 60,
    maxAnswered: Infinity,
    extendsAnswered: true,
    claimAt: 1,
    commitBatchMax: 100,
    commitLingerMs: 2,
    commitLingerBelow: 10,
    commitRetryMs: 10,
    idleLaneMs: 60_000,
    idOf: (item) => item.id,
    laneOf: (item) => item.lane,
    newLane: (key) => new PausableLane(key, 2, 2),
    newLaneRoom: 4,
    claim: async (want, lanes) => {
      queue.claims.push({ want, lanes });
      const full = new Set(lanes.full);
      const rooms = new Map(lanes.rooms);
      const taken: Item[] = [];
      const perLane = new Map<string, number>();
      for (const item of [...queue.backlog]) {
        if (taken.length >= want) break;
        const room = full.has(item.lane) ? 0 : (rooms.get(item.lane) ?? lanes.otherRoom);
        if ((perLane.get(item.lane) ?? 0) >= room) continue;
        perLane.set(item.lane, (perLane.get(item.lane) ?? 0) + 1);
        taken.push(item);
        queue.backlog.splice(queue.backlog.indexOf(item), 1);
      }
      return taken;
    },
    extend: async (items) => {
      queue.extended.push(items.map((item) => item.id));
      return items.length;
    },
    release: async (items, until) => {
      queue.released.push({ ids: items.map((item) => item.id), until });
      queue.backlog.push(...items);
    },
    run: async (item) => {
      const now = (queue.running.get(item.lane) ?? 0) + 1;
      queue.running.set(item.lane, now);
      queue.maxRunning.set(item.lane, Math.max(queue.maxRunning.get(item.lane) ?? 0, now));
      await new Promise((resolve) => setTimeout(resolve, 1 + Math.floor(Math.random() * 3)));
      queue.running.set(item.lane, queue.running.get(item.lane)! - 1);
      return `done ${item.id}`;
    },
    commit: async (batch: Array<Finished<Item, string>>) => {
      queue.committing += 1;
      queue.maxCommitting = Math.max(queue.maxCommitting, queue.committing);
      await new Promise((resolve) => setTimeout(resolve, 3));
      for (const { item, outcome } of batch) {
        assert.is(outcome, `done ${item.id}`);
        queue.committed.set(item.id, (queue.committed.get(item.id) ?? 0) + 1);
      }
      queue.commitSizes.push(batch.length);
      queue.committing -= 1;
    },
    ...overrides,
  });
}

test('the loop works every item once, lanes bound what runs per key, commits are grouped and one at a time', async () => {
  const queue = fakeQueue(300, ['a', 'b', 'c']);
  const engine = engineOn(queue);
  const stop = new AbortController();
  const loop = runLeasedBatchLoop(engine, {
    signal: stop.signal,
    waker: createWaker(),
    log: pino({ level: 'silent' }),
    noun: 'test items',
    pollMs: 50,
    claimGapMs: 0,
    claimErrorPauseMs: 10,
    drainTimeoutMs: 1_000,
  });
  await waitFor('every item committed', async () => queue.committed.size === 300, { timeoutMs: 10_000, intervalMs: 5 });
  stop.abort();
  await loop;
  assert.ok(
    [...queue.committed.values()].every((times) => times === 1),
    'each item committed once',
  );
  for (const lane of ['a', 'b', 'c']) assert.ok(queue.maxRunning.get(lane)! <= 2, `lane ${lane} ran at most 2`);
  assert.is(queue.maxCommitting, 1, 'one commit at a time');
  assert.ok(queue.commitSizes.length < 300 / 2, `grouped commits: ${queue.commitSizes.length} statements`);
  assert.ok(
    queue.claims.every(({ want }) => want <= 10),
    'no claim asks for more than a batch',
  );
  assert.is(engine.held(), 0);
});

test('claims tell each lane its room: a full lane is named, an unknown key gets the new-lane room', async () => {
  const queue = fakeQueue(40, ['a']);
  const engine = engineOn(queue, { run: () => new Promise<string>(() => {}) });
  const first = await engine.claim();
  // Lane a is new: 4 (two slots, two waiting).
  assert.equal(first, { claimed: 4, requested: 10 });
  assert.is(queue.claims[0].lanes.otherRoom, 4);
  await engine.claim();
  assert.equal(queue.claims[1].lanes.full, ['a']);
  assert.equal(
    engine.lanes().map((lane) => [lane.key, lane.inFlight, lane.waiting.length]),
    [['a', 2, 2]],
  );
  await engine.stop(10);
});

test('a commit that throws keeps its items held (leases extended) and is tried again', async () => {
  const queue = fakeQueue(6, ['a', 'b', 'c']);
  let failures = 1;
  const commits: string[][] = [];
  const engine = engineOn(queue, {
    leaseMs: 150,
    commit: async (batch) => {
      commits.push(batch.map(({ item }) => item.id));
      if (failures-- > 0) throw new Error('database gone');
      for (const { item } of batch) queue.committed.set(item.id, 1);
    },
  });
  await engine.claim();
  await engine.idle();
  assert.is(queue.committed.size, 6);
  assert.ok(commits.length >= 2, 'tried again');
  assert.equal(new Set(commits.flat()).size, 6);
  await engine.stop(10);
});

test('a run that throws is left to its lease: not committed, no longer held', async () => {
  const queue = fakeQueue(4, ['a']);
  const engine = engineOn(queue, {
    run: async (item) => {
      if (item.id === 'i1') throw new Error('crash');
      return `done ${item.id}`;
    },
  });
  await engine.claim();
  await engine.idle();
  assert.equal([...queue.committed.keys()].sort(), ['i0', 'i2', 'i3']);
  assert.is(engine.held(), 0);
  await engine.stop(10);
});

test('leases of held items are extended; with extendsAnswered off, answered ones are not', async () => {
  const queue = fakeQueue(2, ['a']);
  let releaseCommit: () => void = () => {};
  const commitGate = new Promise<void>((resolve) => (releaseCommit = resolve));
  const engine = engineOn(queue, {
    leaseMs: 150,
    extendsAnswered: false,
    run: async (item) => {
      if (item.id === 'i1') await new Promise((resolve) => setTimeout(resolve, 400));
      return `done ${item.id}`;
    },
    commit: async (batch) => {
      await commitGate;
      for (const { item } of batch) queue.committed.set(item.id, 1);
    },
  });
  await engine.claim();
  await waitFor('an extension while i1 runs and i0 waits for its commit', async () => queue.extended.length >= 2, {
    timeoutMs: 2_000,
    intervalMs: 10,
  });
  assert.ok(
    queue.extended.every((ids) => !ids.includes('i0')),
    'the answered item is not extended',
  );
  assert.ok(
    queue.extended.some((ids) => ids.includes('i1')),
    'the running item is',
  );
  releaseCommit();
  await engine.idle();
  await engine.stop(10);
});

test('a paused lane gives its waiting items back until its pause ends; stop gives back what waits', async () => {
  const queue = fakeQueue(8, ['a', 'b']);
  const pausedUntil = Date.now() + 60_000;
  let gate: () => void = () => {};
  const hold = new Promise<void>((resolve) => (gate = resolve));
  const engine = engineOn(queue, {
    run: async (item, lane) => {
      if (item.lane === 'a') lane.pausedUntil = pausedUntil;
      else await hold;
      return `done ${item.id}`;
    },
  });
  await engine.claim();
  await waitFor('lane a released', async () => queue.released.length > 0, { timeoutMs: 2_000, intervalMs: 5 });
  assert.equal(queue.released[0].until?.getTime(), pausedUntil);
  assert.ok(queue.released[0].ids.every((id) => ['i0', 'i2', 'i4', 'i6'].includes(id)));
  // Lane b: two running (held by the gate), two waiting; stop gives the waiting ones back.
  const stopping = engine.stop(2_000);
  await waitFor('lane b waiting released', async () => queue.released.length === 2, {
    timeoutMs: 2_000,
    intervalMs: 5,
  });
  assert.is(queue.released[1].until, undefined);
  assert.equal(queue.released[1].ids.sort(), ['i5', 'i7']);
  gate();
  await stopping;
  assert.ok(queue.committed.has('i1') && queue.committed.has('i3'), 'running items finished and committed at stop');
  assert.is(engine.held(), 0);
});

test('a lane with a backlog waiting does not ask for claims; one running low does', async () => {
  const queue = fakeQueue(8, ['a']);
  let openCommit: () => void = () => {};
  const commitGate = new Promise<void>((resolve) => (openCommit = resolve));
  const engine = engineOn(queue, {
    newLane: (key) => new PausableLane(key, 2, 6),
    newLaneRoom: 8,
    commit: async (batch) => {
      await commitGate;
      for (const { item } of batch) queue.committed.set(item.id, 1);
    },
  });
  const waitingWhenAsked: number[] = [];
  engine.onWantsClaim(() => waitingWhenAsked.push(engine.lanes()[0].waiting.length));
  assert.equal(await engine.claim(), { claimed: 8, requested: 10 });
  await waitFor('every item answered', async () => engine.lanes()[0].inFlight === 0, {
    timeoutMs: 2_000,
    intervalMs: 5,
  });
  assert.ok(waitingWhenAsked.length > 0, 'asked once the lane ran low');
  assert.ok(
    waitingWhenAsked.every((waiting) => waiting < 2),
    `asked only with fewer waiting than its 2 slots: ${waitingWhenAsked.join(', ')}`,
  );
  openCommit();
  await engine.idle();
  assert.is(queue.committed.size, 8);
  await engine.stop(10);
});

test.run();
