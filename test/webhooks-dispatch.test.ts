// The webhook dispatcher (issue 19): deliveries claimed in batches from webhook_deliveries, one lane
// per endpoint with adaptive concurrency and keep-alive connections, outcomes settled in batches;
// 429 + Retry-After pauses an endpoint; a slow and a dead endpoint leave a healthy one alone; two
// workers on one database deliver each delivery once; a dead worker's leases are taken over.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { createTestDispatcher, startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { emitEvent } from '../daemon/modules/webhooks/events.ts';
import { buildWebhookPayload, DELIVERIES_CHANNEL } from '../daemon/modules/webhooks/fan-out.ts';
import { FAN_OUT_EVENTS } from '../daemon/modules/webhooks/sql/fan-out.ts';
import { claimDeliveries, settleDeliveries } from '../daemon/modules/webhooks/sql/delivery-store.ts';
import {
  EndpointLane,
  INITIAL_IN_FLIGHT,
  newLaneRoom,
  retryAfterMs,
  UNREACHABLE_PAUSE_AFTER,
} from '../daemon/modules/webhooks/endpoint-lane.ts';
import type { DeliveryOutcome } from '../daemon/modules/webhooks/attempt.ts';
import { verifyWebhookSignature } from '../shared/webhooks.ts';
import { waitFor } from './helpers/wait.ts';

let ctx: TestContext;
let receiver: Receiver;

test.before(async () => {
  ctx = await createTestContext({ env: { WEBHOOK_RETRY_BASE_MS: '50', WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: '16' } });
  receiver = await startReceiver();
});
test.after(async () => {
  await receiver?.close();
  await ctx?.close();
});
test.before.each(() => {
  receiver.requests.length = 0;
  receiver.respond = () => ({ status: 200, body: 'ok' });
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

async function createEndpoint(headers: Record<string, string>, url: string, events: string[]) {
  const res = await ctx.app.inject({ method: 'POST', url: '/webhooks/endpoints', headers, payload: { url, events } });
  assert.is(res.statusCode, 201, res.body);
  return res.json() as { id: string; secret: string };
}

async function emitMany(
  tenantId: string,
  type: 'email.sent' | 'email.delivered' | 'email.opened' | 'email.clicked',
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push(await emitEvent(ctx.db.sequelize, { tenantId, type, data: { n: i } }));
  return ids;
}

/** Nothing left pending by earlier tests: claims below see only this test's deliveries. */
async function skipEverythingPending(): Promise<void> {
  await ctx.db.sequelize.query(
    `UPDATE webhook_deliveries SET status = 'skipped', due_at = NULL WHERE status = 'pending'`,
  );
}

async function statusesOf(endpointId: string): Promise<Record<string, number>> {
  const rows = await q<{ status: string; n: number }>(
    `SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = :endpointId GROUP BY status`,
    { endpointId },
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

test('the adaptive limit: starts at 4, grows on fast 2xx while work waits (slow start, then additive), halves when overloaded, stays within the ceiling', () => {
  const lane = new EndpointLane('e', 6);
  assert.is(lane.limit, INITIAL_IN_FLIGHT);
  lane.observe('fast-success');
  assert.is(lane.limit, 4, 'nothing waits: no growth');
  lane.waiting.push({ id: 'd' });
  for (let i = 0; i < 100; i++) lane.observe('fast-success');
  assert.is(lane.limit, 6, 'capped by the ceiling');
  lane.observe('slow-success');
  lane.observe('other');
  assert.is(lane.limit, 6);
  lane.observe('overloaded');
  assert.is(lane.limit, 3);
  for (let i = 0; i < 5; i++) lane.observe('overloaded');
  assert.is(lane.limit, 1, 'never below one');
  lane.pause(Date.now() + 60_000);
  assert.is(lane.freeSlots(), 0);
  assert.ok(lane.saturated(), 'a paused endpoint is left out of claims');
  const refused = new EndpointLane('r', 16);
  refused.observe('unreachable');
  refused.observe('unreachable');
  refused.observe('fast-success');
  refused.observe('unreachable');
  assert.is(refused.paused(), false, 'an answer in between resets the run of refusals');
  for (let i = 1; i < UNREACHABLE_PAUSE_AFTER; i++) refused.observe('unreachable');
  assert.is(refused.paused(), true, `${UNREACHABLE_PAUSE_AFTER} refusals in a row pause the lane`);
  assert.is(refused.room(), 0, 'a paused lane takes nothing in claims');
  const ramp = new EndpointLane('s', 64);
  ramp.waiting.push({ id: 'd' });
  for (let i = 0; i < 12; i++) ramp.observe('fast-success');
  assert.is(ramp.limit, 16, 'slow start: one more slot per fast answer until the first overload');
  ramp.observe('overloaded');
  assert.is(ramp.limit, 8);
  for (let i = 0; i < 8; i++) ramp.observe('fast-success');
  assert.is(ramp.limit, 9, 'after an overload: about one more per round trip');
  assert.is(retryAfterMs('3'), 3000);
  assert.is(retryAfterMs(new Date(Date.now() + 10_000).toUTCString())! > 8000, true);
  assert.is(retryAfterMs('soon'), null);
  assert.is(retryAfterMs(null), null);
  assert.is(retryAfterMs('999999'), 60 * 60_000);
});

test("a batch to two endpoints arrives once each, signed with each endpoint's secret, over reused connections", async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const second = await startReceiver();
  try {
    const one = await createEndpoint(asKey, receiver.url, ['email.sent']);
    const two = await createEndpoint(asKey, second.url, ['email.sent']);
    const eventIds = await emitMany(tenantId, 'email.sent', 60);
    const connectionsBefore = receiver.connections;
    const dispatcher = createTestDispatcher(ctx);
    const claimed = await dispatcher.claim();
    assert.is(
      claimed.claimed,
      2 * newLaneRoom(16),
      "one claim statement took both endpoints' deliveries, each up to a new lane's room",
    );
    await waitFor('every delivery', async () => {
      await dispatcher.claim();
      await dispatcher.idle();
      return dispatcher.outcomes.length === 120;
    });
    await dispatcher.stop(1_000);

    for (const [target, endpoint] of [
      [receiver, one],
      [second, two],
    ] as const) {
      assert.is(target.requests.length, 60);
      const seenEvents = target.requests.map((request) => {
        const body = verifyWebhookSignature({
          payload: request.rawBody,
          header: request.headers['x-service-signature'],
          secret: endpoint.secret,
        }) as { id: string; createdAt: string; type: string };
        assert.match(body.createdAt, /^\d{4}-\d\d-\d\dT/);
        assert.is(body.type, 'email.sent');
        return body.id;
      });
      assert.equal([...seenEvents].sort(), [...eventIds].sort(), 'every event once');
      assert.is(new Set(target.requests.map((r) => r.headers['x-service-delivery-id'])).size, 60);
      assert.equal(await statusesOf(endpoint.id), { succeeded: 60 });
    }
    assert.ok(
      receiver.connections - connectionsBefore <= 16,
      `keep-alive: ${receiver.connections - connectionsBefore} connections for 60 requests`,
    );
    const [row] = await q<{
      attempt: number;
      status_code: number;
      response_body: string;
      due_at: Date | null;
      locked_by: string | null;
      delivered_at: Date;
    }>(
      `SELECT attempt, status_code, response_body, due_at, locked_by, delivered_at FROM webhook_deliveries WHERE endpoint_id = :id LIMIT 1`,
      { id: one.id },
    );
    assert.equal(
      [row.attempt, row.status_code, row.response_body, row.due_at, row.locked_by],
      [1, 200, 'ok', null, null],
    );
    assert.ok(row.delivered_at);
    assert.is(dispatcher.outcomes.length, 120);
  } finally {
    await second.close();
  }
});

test('429 with Retry-After pauses the endpoint: the attempt counts, the retry waits for the pause, other endpoints carry on', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const limited = await startReceiver();
  limited.respond = () => ({ status: 429, body: 'slow down', headers: { 'retry-after': '2' } });
  try {
    const paused = await createEndpoint(asKey, limited.url, ['email.opened']);
    const healthy = await createEndpoint(asKey, receiver.url, ['email.opened']);
    await emitMany(tenantId, 'email.opened', 1);
    const dispatcher = createTestDispatcher(ctx);
    await dispatcher.claim();
    await dispatcher.idle();
    assert.is(limited.requests.length, 1);
    const first = dispatcher.outcomes.find((o) => o.endpointId === paused.id)!;
    assert.equal([first.status, first.attempt, first.statusCode], ['pending', 1, 429]);
    assert.ok(first.delayMs! >= 2000, `the retry waits for Retry-After (${first.delayMs} ms), not the 50 ms backoff`);
    const [endpoint] = await q<{ paused: boolean; consecutive_failures: number }>(
      `SELECT paused_until > now() AS paused, consecutive_failures FROM webhook_endpoints WHERE id = :id`,
      { id: paused.id },
    );
    assert.equal([endpoint.paused, endpoint.consecutive_failures], [true, 1]);

    // During the pause nothing goes to the paused endpoint, even new events; the other endpoint gets its own.
    await emitMany(tenantId, 'email.opened', 3);
    await dispatcher.claim();
    await dispatcher.idle();
    assert.is(limited.requests.length, 1);
    assert.is(receiver.requests.length, 4);
    assert.equal(await statusesOf(healthy.id), { succeeded: 4 });
    assert.equal(await statusesOf(paused.id), { pending: 4 });

    limited.respond = () => ({ status: 200 });
    await waitFor('the pause to end and the paused endpoint to be served', async () => {
      await dispatcher.claim();
      await dispatcher.idle();
      return (await statusesOf(paused.id)).succeeded === 4;
    });
    const [done] = await q<{ attempt: number; status_code: number }>(
      `SELECT attempt, status_code FROM webhook_deliveries WHERE endpoint_id = :id AND attempt = 2`,
      { id: paused.id },
    );
    assert.equal([done.attempt, done.status_code], [2, 200], 'the 429 was attempt 1, kept; the retry is attempt 2');
    await dispatcher.stop(1_000);
  } finally {
    await limited.close();
  }
});

test("a slow and a dead endpoint beside a healthy one: the healthy one's deliveries all arrive while the slow ones hang", async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const slow = await startReceiver();
  let releaseSlow: () => void = () => {};
  const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
  slow.respond = async () => {
    await slowGate;
    return { status: 200 };
  };
  try {
    const slowEndpoint = await createEndpoint(asKey, slow.url, ['email.sent']);
    const dead = await createEndpoint(asKey, 'http://127.0.0.1:1/nothing-listens', ['email.sent']);
    const healthy = await createEndpoint(asKey, receiver.url, ['email.sent']);
    await emitMany(tenantId, 'email.sent', 40);
    const dispatcher = createTestDispatcher(ctx);
    await waitFor('every healthy delivery', async () => {
      await dispatcher.claim();
      return (await statusesOf(healthy.id)).succeeded === 40;
    });
    assert.is(receiver.requests.length, 40);
    const lanes = Object.fromEntries(dispatcher.lanes().map((lane) => [lane.endpointId, lane]));
    // The slow endpoint holds only its own few attempts, none of the others'.
    assert.ok(
      lanes[slowEndpoint.id].inFlight <= INITIAL_IN_FLIGHT,
      `slow in flight: ${lanes[slowEndpoint.id].inFlight}`,
    );
    assert.ok(slow.requests.length <= INITIAL_IN_FLIGHT, `slow requests: ${slow.requests.length}`);
    const deadOutcomes = dispatcher.outcomes.filter((o) => o.endpointId === dead.id);
    assert.ok(deadOutcomes.length > 0);
    assert.ok(deadOutcomes.every((o) => o.status !== 'succeeded' && /ECONNREFUSED/.test(o.error ?? '')));
    assert.ok(lanes[dead.id].limit < INITIAL_IN_FLIGHT, "refused connections shrink the dead endpoint's limit");
    releaseSlow();
    await ctx.db.sequelize.query(`UPDATE webhook_endpoints SET enabled = false WHERE id IN (:ids)`, {
      replacements: { ids: [dead.id, slowEndpoint.id] },
    });
    await dispatcher.stop(5_000);
  } finally {
    releaseSlow();
    await slow.close();
  }
});

test('a claim gives each endpoint its own room: none to a full lane, its room to a known one, the default to the others', async () => {
  await skipEverythingPending();
  const { asKey, tenantId } = await createWorld(ctx.app);
  const [full, known, other] = [
    await createEndpoint(asKey, receiver.url, ['email.clicked']),
    await createEndpoint(asKey, receiver.url, ['email.clicked']),
    await createEndpoint(asKey, receiver.url, ['email.clicked']),
  ];
  await emitMany(tenantId, 'email.clicked', 10);
  const claimed = await claimDeliveries(ctx.db.sql, 'rooms-worker', 100, 60_000, {
    full: [full.id],
    rooms: [[known.id, 3]],
    otherRoom: 5,
  });
  const per = (id: string) => claimed.filter((d) => d.endpointId === id).length;
  assert.equal([per(full.id), per(known.id), per(other.id)], [0, 3, 5]);
  const [held] = await q<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_deliveries WHERE locked_by = 'rooms-worker' AND status = 'pending'`,
  );
  assert.is(claimed.length, 8);
  assert.is(held.n, 8, 'only what was handed out is leased; the rest stays due for anyone');
  await ctx.db.sequelize.query(
    `UPDATE webhook_deliveries SET status = 'skipped', due_at = NULL WHERE endpoint_id IN (:ids) AND status = 'pending'`,
    { replacements: { ids: [full.id, known.id, other.id] } },
  );
});

test('isolation: a hanging endpoint keeps only its own room, a refusing one pauses its lane, the healthy one gets every delivery and grows', async () => {
  await skipEverythingPending();
  const { asKey, tenantId } = await createWorld(ctx.app);
  const slow = await startReceiver();
  let releaseSlow: () => void = () => {};
  const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
  slow.respond = async () => {
    await slowGate;
    return { status: 200 };
  };
  try {
    // The troubled endpoints' deliveries come first in due order: the worst case for a shared claim.
    const hanging = await createEndpoint(asKey, slow.url, ['email.sent']);
    const dead = await createEndpoint(asKey, 'http://127.0.0.1:1/nothing-listens', ['email.sent']);
    await emitMany(tenantId, 'email.sent', 60);
    const healthy = await createEndpoint(asKey, receiver.url, ['email.sent']);
    await emitMany(tenantId, 'email.sent', 200);
    const dispatcher = createTestDispatcher(ctx, { workerId: 'isolation-worker', claimBatch: 100, maxHeld: 200 });
    const heldBy = async (endpointId: string) =>
      (
        await q<{ n: number }>(
          `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = :endpointId AND locked_by = 'isolation-worker' AND status = 'pending'`,
          { endpointId },
        )
      )[0].n;

    const first = await dispatcher.claim();
    assert.is(
      first.claimed,
      3 * newLaneRoom(16),
      "the first claim gave each of the three endpoints a new lane's room, the healthy one included",
    );
    let mostHeldByHanging = 0;
    await waitFor('every healthy delivery while the hanging endpoint hangs', async () => {
      await dispatcher.claim();
      mostHeldByHanging = Math.max(mostHeldByHanging, await heldBy(hanging.id));
      return (await statusesOf(healthy.id)).succeeded === 200;
    });

    assert.is(receiver.requests.length, 200, 'every healthy delivery arrived once');
    assert.is(new Set(receiver.requests.map((r) => r.headers['x-service-delivery-id'])).size, 200);
    const lanes = Object.fromEntries(dispatcher.lanes().map((lane) => [lane.endpointId, lane]));
    assert.ok(
      lanes[healthy.id].limit > INITIAL_IN_FLIGHT,
      `the healthy lane grew past its start (${lanes[healthy.id].limit}), not held to anyone else's`,
    );
    // The hanging endpoint: its own attempts in flight and its small waiting allowance, nothing more.
    assert.is(slow.requests.length, INITIAL_IN_FLIGHT, 'the hanging endpoint got only its own concurrency');
    assert.is(lanes[hanging.id].inFlight, INITIAL_IN_FLIGHT);
    assert.ok(
      mostHeldByHanging <= newLaneRoom(16),
      `the hanging endpoint held ${mostHeldByHanging} deliveries (room ${newLaneRoom(16)})`,
    );
    assert.ok((await statusesOf(hanging.id)).pending === 260);
    // The dead endpoint: a few refusals, then its lane pauses and gives back what waited, unattempted.
    const deadOutcomes = dispatcher.outcomes.filter((o) => o.endpointId === dead.id);
    assert.ok(
      deadOutcomes.length >= UNREACHABLE_PAUSE_AFTER && deadOutcomes.length <= 12,
      `dead attempts: ${deadOutcomes.length}`,
    );
    assert.ok(
      deadOutcomes.every(
        (o) => o.answer === 'unreachable' && o.status === 'pending' && /ECONNREFUSED/.test(o.error ?? ''),
      ),
    );
    const [untouched] = await q<{ n: number }>(
      `SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = :id AND attempt = 0 AND status = 'pending'`,
      { id: dead.id },
    );
    assert.is(untouched.n, 260 - deadOutcomes.length, "the rest of the dead endpoint's backlog was not burnt through");
    assert.ok((await heldBy(dead.id)) <= INITIAL_IN_FLIGHT, 'a paused lane gives its waiting deliveries back');

    releaseSlow();
    await ctx.db.sequelize.query(`UPDATE webhook_endpoints SET enabled = false WHERE id IN (:ids)`, {
      replacements: { ids: [dead.id, hanging.id] },
    });
    await dispatcher.stop(5_000);
  } finally {
    releaseSlow();
    await slow.close();
  }
});

test('two workers on one database: each delivery is attempted once', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asKey, receiver.url, ['email.delivered']);
  await emitMany(tenantId, 'email.delivered', 150);
  const a = createTestDispatcher(ctx, { workerId: 'worker-a', claimBatch: 20 });
  const b = createTestDispatcher(ctx, { workerId: 'worker-b', claimBatch: 20 });
  const work = (dispatcher: typeof a) =>
    waitFor(
      'the 150 deliveries to succeed',
      async () => {
        if ((await statusesOf(endpoint.id)).succeeded === 150) return true;
        await dispatcher.claim();
        return false;
      },
      { timeoutMs: 60_000, intervalMs: 5 },
    );
  await Promise.all([work(a), work(b)]);
  await Promise.all([a.idle(), b.idle()]);
  await Promise.all([a.stop(1_000), b.stop(1_000)]);
  const deliveryIds = receiver.requests.map((r) => String(r.headers['x-service-delivery-id']));
  assert.is(deliveryIds.length - new Set(deliveryIds).size, 0, 'no delivery was sent twice');
  assert.is(receiver.requests.length, 150);
  const mine = (outcomes: DeliveryOutcome[]) => outcomes.filter((o) => o.endpointId === endpoint.id).length;
  assert.ok(mine(a.outcomes) > 0 && mine(b.outcomes) > 0, `both worked: ${mine(a.outcomes)} + ${mine(b.outcomes)}`);
  assert.is(mine(a.outcomes) + mine(b.outcomes), 150);
  const [row] = await q<{ attempts: number }>(
    `SELECT sum(attempt)::int AS attempts FROM webhook_deliveries WHERE endpoint_id = :id`,
    { id: endpoint.id },
  );
  assert.is(row.attempts, 150);
});

test("a killed worker's deliveries are taken over when its lease runs out; its late outcome is refused", async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asKey, receiver.url, ['email.sent']);
  // Earlier tests' pending deliveries are set aside: the dead worker's claim of 10 (in due order) took only
  // two of this endpoint's three when they left more than seven due (CI, 2026-11-27).
  await ctx.db.sequelize.query(
    `UPDATE webhook_deliveries SET status = 'skipped', due_at = NULL, locked_by = NULL, locked_until = NULL WHERE status = 'pending'`,
  );
  await emitMany(tenantId, 'email.sent', 3);
  // The worker claims, then dies before attempting anything.
  // A lease long enough that a loaded CI machine cannot let it run out before the survivor's first claim.
  const taken = await claimDeliveries(ctx.db.sql, 'killed-worker', 10, 2_000);
  assert.is(taken.filter((d) => d.endpointId === endpoint.id).length, 3);
  const survivor = createTestDispatcher(ctx, { workerId: 'survivor' });
  await survivor.claim();
  await survivor.idle();
  // The survivor may take what earlier tests left due; this endpoint's leased three stay the dead worker's.
  const owners = await q<{ locked_by: string | null }>(
    `SELECT locked_by FROM webhook_deliveries WHERE endpoint_id = :id AND status <> 'succeeded'`,
    { id: endpoint.id },
  );
  assert.equal(
    owners.map((o) => o.locked_by),
    ['killed-worker', 'killed-worker', 'killed-worker'],
    'leased deliveries are not claimed twice',
  );
  await waitFor('the lease to run out and the survivor to deliver', async () => {
    await survivor.claim();
    await survivor.idle();
    return (await statusesOf(endpoint.id)).succeeded === 3;
  });
  assert.is(receiver.requests.length, 3);
  const late: DeliveryOutcome = {
    deliveryId: taken[0].id,
    deliveryCreatedAt: taken[0].createdAt,
    endpointId: endpoint.id,
    attempted: true,
    attempt: 1,
    status: 'failed',
    statusCode: 500,
    responseBody: 'late',
    error: 'late',
    dueAt: null,
    delayMs: null,
    endpointEffect: null,
    pauseUntil: null,
    answer: 'other',
  };
  assert.is((await settleDeliveries(ctx.db.sql, 'killed-worker', [late])).settled, 0);
  const [row] = await q<{ status: string; attempt: number; status_code: number }>(
    `SELECT status, attempt, status_code FROM webhook_deliveries WHERE id = :id`,
    { id: taken[0].id },
  );
  assert.equal([row.status, row.attempt, row.status_code], ['succeeded', 1, 200]);
  await survivor.stop(1_000);
});

test('/health/queues counts pending deliveries in the webhook queue', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  await createEndpoint(asKey, receiver.url, ['email.sent']);
  await ctx.db.sequelize.query(
    `UPDATE webhook_deliveries SET status = 'skipped', due_at = NULL WHERE status = 'pending'`,
  );
  await emitMany(tenantId, 'email.sent', 3);
  const res = await ctx.app.inject({ method: 'GET', url: '/health/queues', headers: asKey });
  assert.is(res.statusCode, 200, res.body);
  assert.is(res.json().queues.webhook.depth, 3);
  assert.is(res.json().queues.webhook.running, 0);
  await claimDeliveries(ctx.db.sql, 'health-worker', 1, 60_000);
  const after = await ctx.app.inject({ method: 'GET', url: '/health/queues', headers: asKey });
  assert.equal([after.json().queues.webhook.depth, after.json().queues.webhook.running], [2, 1]);
});

test('FAN_OUT_EVENTS: many events in one statement, one due delivery per enabled subscribed endpoint', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const sent = await createEndpoint(asKey, receiver.url, ['email.sent']);
  const delivered = await createEndpoint(asKey, receiver.url, ['email.delivered', 'email.sent']);
  const off = await createEndpoint(asKey, receiver.url, ['email.sent']);
  await ctx.app.inject({ method: 'PATCH', url: `/webhooks/endpoints/${off.id}/toggle`, headers: asKey });
  const events = await q<{ id: string; type: string; created_at: Date }>(
    `INSERT INTO events (tenant_id, type, data, fanned_out_at) VALUES (:tenantId, 'email.sent', '{}', now()), (:tenantId, 'email.delivered', '{}', now()) RETURNING id, type, created_at`,
    { tenantId },
  );
  const payloads = events.map((event) =>
    JSON.stringify(
      buildWebhookPayload({
        id: event.id,
        tenantId,
        type: event.type,
        createdAt: new Date(event.created_at),
        data: {},
      }),
    ),
  );
  const inserted = await ctx.db.sql.pool.query(
    FAN_OUT_EVENTS.statement.text,
    FAN_OUT_EVENTS.values({
      events: events.map((event, i) => ({
        id: event.id,
        tenant_id: tenantId,
        type: event.type,
        payload: payloads[i],
        max_attempts: 5,
      })),
    }),
  );
  assert.is(inserted.rowCount, 3);
  const rows = await q<{ endpoint_id: string; event_type: string; due: boolean; payload: { id: string } }>(
    `SELECT endpoint_id, event_type, due_at <= now() AS due, payload FROM webhook_deliveries WHERE event_id IN (:ids) ORDER BY event_type, endpoint_id`,
    { ids: events.map((e) => e.id) },
  );
  const expected = [
    ...[delivered.id].map((id) => ['email.delivered', id]),
    ...[sent.id, delivered.id].sort().map((id) => ['email.sent', id]),
  ];
  assert.equal(
    rows.map((row) => [row.event_type, row.endpoint_id]),
    expected,
  );
  assert.ok(rows.every((row) => row.due));
  assert.ok(rows.every((row) => events.some((e) => e.id === row.payload.id)));
});

test('an event that has deliveries wakes the webhook worker at commit (NOTIFY); one nobody subscribes to does not', async () => {
  const listener = new pg.Client({ connectionString: ctx.db.url });
  const notified: string[] = [];
  listener.on('notification', (message) => notified.push(message.payload ?? ''));
  await listener.connect();
  try {
    await listener.query(`LISTEN ${DELIVERIES_CHANNEL}`);
    const { asKey, tenantId } = await createWorld(ctx.app);
    await createEndpoint(asKey, receiver.url, ['email.delivered']);
    // Committed first: had it notified, its notification would arrive before the second one's.
    await emitEvent(ctx.db.sequelize, { tenantId, type: 'email.sent', data: {} });
    await ctx.db.sequelize.transaction(async (transaction) => {
      await emitEvent(ctx.db.sequelize, { tenantId, type: 'email.delivered', data: { n: 1 } }, transaction);
      await emitEvent(ctx.db.sequelize, { tenantId, type: 'email.delivered', data: { n: 2 } }, transaction);
      assert.equal(notified, [], 'nothing is announced before the commit');
    });
    await waitFor('the notification of the committed deliveries', () => notified.length > 0);
    // A marker sent after the commit: everything notified before it has arrived once it does.
    await ctx.db.sequelize.query(`SELECT pg_notify('${DELIVERIES_CHANNEL}', 'marker')`);
    await waitFor('the marker', () => notified.length > 1);
    assert.equal(notified, ['', 'marker'], 'one per transaction with deliveries, then the marker');
  } finally {
    await listener.end();
  }
});

test.run();
