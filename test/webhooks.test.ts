// Outbound webhooks end to end: endpoints over HTTP, fan-out from the outbox, signed deliveries to a
// real HTTP receiver (checked with our verifier, Stripe's and an independent Standard Webhooks HMAC),
// retries through the worker's dispatcher, 410, auto-disable, toggle, replay, test events, concurrency.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHmac } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import Stripe from 'stripe';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { waitFor } from './helpers/wait.ts';
import { drainWebhookDeliveries, runDueDeliveries, startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { emitEvent } from '../daemon/modules/webhooks/events.ts';
import { verifyWebhookSignature } from '../shared/webhooks.ts';
import { USER_AGENT_LABEL } from '../shared/constants.ts';

let ctx: TestContext;
let receiver: Receiver;
const stripe = new Stripe('sk_test_unused');

test.before(async () => {
  ctx = await createTestContext({ env: { WEBHOOK_RETRY_BASE_MS: '50' } });
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

/**
 * Runs the system mail queue once the disabled-endpoint notice is in it: the dispatcher sends notices
 * beside its settling, not before it reports idle, so under load they may land a moment later.
 */
async function runOwnerNotices(): Promise<string[]> {
  await waitFor(
    'the disabled-endpoint notice',
    async () => (await q(`SELECT 1 FROM jobs WHERE queue = 'system'`)).length > 0,
    { timeoutMs: 5_000, intervalMs: 20 },
  );
  return runJobs(ctx, 'system');
}

async function createEndpoint(headers: Record<string, string>, body: Record<string, unknown>) {
  const res = await ctx.app.inject({ method: 'POST', url: '/webhooks/endpoints', headers, payload: body });
  assert.is(res.statusCode, 201, res.body);
  return res.json();
}

async function emit(
  tenantId: string,
  type: 'email.delivered' | 'email.bounced' | 'email.sent',
  data: Record<string, unknown> = {},
) {
  return ctx.db.sequelize.transaction((tx) =>
    emitEvent(ctx.db.sequelize, { tenantId, type, data: { emailId: 'e-1', to: ['a@example.test'], ...data } }, tx),
  );
}

test('create answers 201 with a whsec_ secret once; list never shows it; the database keeps it sealed', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const created = await createEndpoint(asKey, { url: receiver.url, events: ['email.delivered', 'email.bounced'] });
  assert.match(created.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  assert.equal(created.events, ['email.delivered', 'email.bounced']);
  assert.is(created.enabled, true);
  const list = await ctx.app.inject({ method: 'GET', url: '/webhooks/endpoints', headers: asKey });
  assert.is(list.statusCode, 200);
  assert.is(list.json().meta.total, 1);
  assert.is(list.json().data[0].id, created.id);
  assert.not.ok('secret' in list.json().data[0]);
  assert.not.ok(list.body.includes(created.secret));
  const [row] = await q<{ secret_encrypted: string; tenant_id: string }>(
    `SELECT secret_encrypted, tenant_id FROM webhook_endpoints WHERE id = :id`,
    { id: created.id },
  );
  assert.is(row.tenant_id, tenantId);
  assert.not.ok(row.secret_encrypted.includes(created.secret.slice(6)));
  const own = await createEndpoint(asKey, {
    url: receiver.url,
    events: ['email.sent'],
    secret: 'my-own-secret-1234567890',
  });
  assert.is(own.secret, 'my-own-secret-1234567890');
});

test('bad input answers 400 with details: unknown event, malformed URL, other scheme, no events, unknown field', async () => {
  const { asKey } = await createWorld(ctx.app);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ url: receiver.url, events: ['email.exploded'] }, 'events'],
    [{ url: 'not a url', events: ['email.sent'] }, 'url'],
    [{ url: 'ftp://example.com/x', events: ['email.sent'] }, 'url'],
    [{ url: receiver.url, events: [] }, 'events'],
    [{ url: receiver.url }, 'events'],
    [{ url: receiver.url, events: ['email.sent'], secret: 'short' }, 'secret'],
  ];
  for (const [body, field] of cases) {
    const res = await ctx.app.inject({ method: 'POST', url: '/webhooks/endpoints', headers: asKey, payload: body });
    assert.is(res.statusCode, 400, `${JSON.stringify(body)} → ${res.body}`);
    const error = res.json();
    assert.is(error.code, 'VALIDATION_FAILED');
    assert.ok(
      error.details.some((d: { field: string }) => d.field.includes(field)),
      `${field} in ${res.body}`,
    );
  }
  const limit = await ctx.app.inject({
    method: 'GET',
    url: `/webhooks/endpoints/${crypto.randomUUID()}/deliveries?limit=abc`,
    headers: asKey,
  });
  assert.is(limit.statusCode, 400);
});

test("scope, role and tenant isolation: no webhooks:manage → 403, another tenant's endpoint → 404", async () => {
  const a = await createWorld(ctx.app);
  const b = await createWorld(ctx.app);
  const endpoint = await createEndpoint(a.asKey, { url: receiver.url, events: ['email.sent'] });
  const narrow = await createApiKey(a.tenantId, { scopes: ['email:send'] });
  const denied = await ctx.app.inject({
    method: 'GET',
    url: '/webhooks/endpoints',
    headers: { authorization: `Bearer ${narrow.key}` },
  });
  assert.is(denied.statusCode, 403);
  const anonymous = await ctx.app.inject({ method: 'GET', url: '/webhooks/endpoints' });
  assert.is(anonymous.statusCode, 401);
  for (const [method, url] of [
    ['PATCH', `/webhooks/endpoints/${endpoint.id}/toggle`],
    ['GET', `/webhooks/endpoints/${endpoint.id}/deliveries`],
    ['POST', `/webhooks/endpoints/${endpoint.id}/test`],
    ['DELETE', `/webhooks/endpoints/${endpoint.id}`],
  ] as const) {
    const res = await ctx.app.inject({ method, url, headers: b.asKey });
    assert.is(res.statusCode, 404, `${method} ${url}`);
    assert.is(res.json().code, 'NOT_FOUND');
  }
  const listB = await ctx.app.inject({ method: 'GET', url: '/webhooks/endpoints', headers: b.asOwner });
  assert.is(listB.json().meta.total, 0);
  const [row] = await q<{ enabled: boolean }>(`SELECT enabled FROM webhook_endpoints WHERE id = :id`, {
    id: endpoint.id,
  });
  assert.is(row.enabled, true);
});

test("fan-out: one delivery due at once per enabled subscribed endpoint, no job, in the event's transaction", async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const other = await createWorld(ctx.app);
  const subscribed = await createEndpoint(asKey, { url: receiver.url, events: ['email.delivered'] });
  const elsewhere = await createEndpoint(asKey, { url: receiver.url, events: ['email.bounced'] });
  const off = await createEndpoint(asKey, { url: receiver.url, events: ['email.delivered'] });
  await ctx.app.inject({ method: 'PATCH', url: `/webhooks/endpoints/${off.id}/toggle`, headers: asKey });
  await createEndpoint(other.asKey, { url: receiver.url, events: ['email.delivered'] });

  const eventId = await emit(tenantId, 'email.delivered');
  const deliveries = await q<{ id: string; endpoint_id: string; event_id: string }>(
    `SELECT id, endpoint_id, event_id FROM webhook_deliveries WHERE event_id = :eventId`,
    { eventId },
  );
  assert.is(deliveries.length, 1);
  assert.is(deliveries[0].endpoint_id, subscribed.id);
  assert.not.ok(deliveries.some((d) => d.endpoint_id === elsewhere.id || d.endpoint_id === off.id));
  const [due] = await q<{ status: string; due: boolean }>(
    `SELECT status, due_at <= now() AS due FROM webhook_deliveries WHERE id = :id`,
    { id: deliveries[0].id },
  );
  assert.equal([due.status, due.due], ['pending', true]);
  assert.is((await q(`SELECT 1 FROM jobs WHERE queue = 'webhook'`)).length, 0);
  const [event] = await q<{ fanned_out_at: Date | null }>(`SELECT fanned_out_at FROM events WHERE id = :eventId`, {
    eventId,
  });
  assert.ok(event.fanned_out_at);

  // A state change that rolls back takes its event and deliveries with it.
  let rolledBackId = '';
  await ctx.db.sequelize
    .transaction(async (tx) => {
      rolledBackId = await emitEvent(ctx.db.sequelize, { tenantId, type: 'email.delivered', data: {} }, tx);
      throw new Error('roll back');
    })
    .catch(() => {});
  assert.is((await q(`SELECT 1 FROM events WHERE id = :id`, { id: rolledBackId })).length, 0);
  assert.is((await q(`SELECT 1 FROM webhook_deliveries WHERE event_id = :id`, { id: rolledBackId })).length, 0);
  await drainWebhookDeliveries(ctx);
});

test("a delivery is a signed POST that our verifier, Stripe's verifier and a Standard Webhooks check accept", async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asKey, { url: receiver.url, events: ['email.delivered'] });
  const eventId = await emit(tenantId, 'email.delivered', { subject: 'Hello ✓' });
  await drainWebhookDeliveries(ctx);
  assert.is(receiver.requests.length, 1);
  const request = receiver.requests[0];
  const [delivery] = await q<{
    id: string;
    status: string;
    attempt: number;
    status_code: number;
    response_body: string;
    delivered_at: Date;
  }>(`SELECT * FROM webhook_deliveries WHERE event_id = :eventId`, { eventId });
  assert.is(request.method, 'POST');
  assert.is(request.path, '/hooks');
  assert.is(request.headers['user-agent'], USER_AGENT_LABEL);
  assert.match(USER_AGENT_LABEL, /\/1\.0$/);
  assert.is(request.headers['content-type'], 'application/json');
  assert.is(request.headers['x-service-event'], 'email.delivered');
  assert.is(request.headers['x-service-delivery-id'], delivery.id);
  assert.match(String(request.headers['x-service-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);

  const body = verifyWebhookSignature({
    payload: request.rawBody,
    header: request.headers['x-service-signature'],
    secret: endpoint.secret,
    toleranceSeconds: 300,
  }) as Record<string, unknown>;
  assert.equal(Object.keys(body), ['id', 'type', 'createdAt', 'tenantId', 'data']);
  assert.is(body.id, eventId);
  assert.is(body.type, 'email.delivered');
  assert.is(body.tenantId, tenantId);
  assert.is((body.data as { subject: string }).subject, 'Hello ✓');

  const viaStripe = stripe.webhooks.constructEvent(
    request.rawBody,
    String(request.headers['x-service-signature']),
    endpoint.secret,
  );
  assert.is(viaStripe.id, eventId);

  // Standard Webhooks, computed here from the spec rather than with our helper.
  const key = Buffer.from(endpoint.secret.slice('whsec_'.length), 'base64url');
  const signed = `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.rawBody}`;
  const expected = createHmac('sha256', key).update(signed).digest('base64');
  assert.is(request.headers['webhook-id'], delivery.id);
  assert.is(request.headers['webhook-signature'], `v1,${expected}`);

  assert.throws(() =>
    verifyWebhookSignature({
      payload: request.rawBody + ' ',
      header: request.headers['x-service-signature'],
      secret: endpoint.secret,
    }),
  );
  assert.throws(() =>
    verifyWebhookSignature({
      payload: request.rawBody,
      header: request.headers['x-service-signature'],
      secret: 'whsec_wrong',
    }),
  );
  assert.throws(() =>
    stripe.webhooks.constructEvent(request.rawBody, String(request.headers['x-service-signature']), 'whsec_wrong'),
  );

  assert.is(delivery.status, 'succeeded');
  assert.is(delivery.attempt, 1);
  assert.is(delivery.status_code, 200);
  assert.is(delivery.response_body, 'ok');
  assert.ok(delivery.delivered_at);

  const list = await ctx.app.inject({
    method: 'GET',
    url: `/webhooks/endpoints/${endpoint.id}/deliveries`,
    headers: asKey,
  });
  assert.is(list.statusCode, 200);
  const shown = list.json().data[0];
  assert.is(shown.id, delivery.id);
  assert.is(shown.event, 'email.delivered');
  assert.is(shown.statusCode, 200);
  assert.is(shown.attempt, 1);
  assert.is(shown.payload.id, eventId);
});

test('failures retry with exponential backoff, 5 attempts in all, then stop keeping the last status', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asKey, { url: receiver.url, events: ['email.bounced'] });
  receiver.respond = () => ({ status: 503, body: 'x'.repeat(5000) });
  const eventId = await emit(tenantId, 'email.bounced');
  const outcomes = await drainWebhookDeliveries(ctx, 15_000);
  assert.is(receiver.requests.length, 5);
  assert.equal(
    outcomes.map((o) => o.status),
    ['pending', 'pending', 'pending', 'pending', 'failed'],
  );
  assert.equal(
    outcomes.map((o) => o.attempt),
    [1, 2, 3, 4, 5],
  );
  const delays = outcomes.slice(0, 4).map((o) => o.delayMs ?? 0);
  [50, 100, 200, 400].forEach((base, i) =>
    assert.ok(delays[i] >= base * 0.8 && delays[i] <= base * 1.2, `delay ${i}: ${delays[i]}`),
  );
  for (let i = 1; i < 5; i++)
    assert.ok(receiver.requests[i].receivedAt - receiver.requests[i - 1].receivedAt >= delays[i - 1] - 5);

  const ids = new Set(receiver.requests.map((r) => r.headers['x-service-delivery-id']));
  assert.is(ids.size, 1);
  for (const request of receiver.requests) {
    verifyWebhookSignature({
      payload: request.rawBody,
      header: request.headers['x-service-signature'],
      secret: endpoint.secret,
    });
  }
  const [delivery] = await q<{
    status: string;
    attempt: number;
    status_code: number;
    response_body: string;
    next_attempt_at: Date | null;
  }>(`SELECT * FROM webhook_deliveries WHERE event_id = :eventId`, { eventId });
  assert.is(delivery.status, 'failed');
  assert.is(delivery.attempt, 5);
  assert.is(delivery.status_code, 503);
  assert.is(delivery.response_body.length, 2048);
  assert.is(delivery.next_attempt_at, null);
  const [endpointRow] = await q<{ consecutive_failures: number; enabled: boolean }>(
    `SELECT * FROM webhook_endpoints WHERE id = :id`,
    { id: endpoint.id },
  );
  assert.is(endpointRow.consecutive_failures, 5);
  assert.is(endpointRow.enabled, true);
  assert.is((await q(`SELECT 1 FROM jobs WHERE queue = 'webhook'`)).length, 0);
});

test('network errors and redirects are failures too (no redirect is followed)', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  receiver.respond = () => ({ status: 302, headers: { location: 'http://127.0.0.1:1/elsewhere' } });
  const redirecting = await createEndpoint(asKey, { url: receiver.url, events: ['email.sent'] });
  const dead = await createEndpoint(asKey, { url: 'http://127.0.0.1:1/nothing-listens', events: ['email.sent'] });
  await emit(tenantId, 'email.sent');
  await runDueDeliveries(ctx);
  const rows = await q<{ endpoint_id: string; status: string; status_code: number | null; error: string }>(
    `SELECT * FROM webhook_deliveries WHERE endpoint_id IN (:a, :b)`,
    { a: redirecting.id, b: dead.id },
  );
  const byEndpoint = Object.fromEntries(rows.map((r) => [r.endpoint_id, r]));
  assert.is(byEndpoint[redirecting.id].status_code, 302);
  assert.match(byEndpoint[redirecting.id].error, /redirects are not followed/);
  assert.is(receiver.requests.length, 1);
  assert.is(byEndpoint[dead.id].status_code, null);
  assert.match(byEndpoint[dead.id].error, /ECONNREFUSED/);
  assert.is(byEndpoint[dead.id].status, 'pending');
  await ctx.db.sequelize.query(`DELETE FROM webhook_endpoints WHERE id IN (:a, :b)`, {
    replacements: { a: redirecting.id, b: dead.id },
  });
  await drainWebhookDeliveries(ctx);
});

test('a 410 answer disables the endpoint at once and mails the tenant owner', async () => {
  const { asKey, tenantId, owner } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asKey, { url: receiver.url, events: ['email.delivered'] });
  receiver.respond = () => ({ status: 410, body: 'gone' });
  const eventId = await emit(tenantId, 'email.delivered');
  const outcomes = await drainWebhookDeliveries(ctx);
  assert.equal(
    outcomes.map((o) => o.status),
    ['failed'],
  );
  assert.is(receiver.requests.length, 1);
  const [row] = await q<{ enabled: boolean; disabled_reason: string }>(
    `SELECT * FROM webhook_endpoints WHERE id = :id`,
    { id: endpoint.id },
  );
  assert.is(row.enabled, false);
  assert.is(row.disabled_reason, 'gone');
  const [delivery] = await q<{ status: string; attempt: number; status_code: number }>(
    `SELECT * FROM webhook_deliveries WHERE event_id = :eventId`,
    { eventId },
  );
  assert.equal([delivery.status, delivery.attempt, delivery.status_code], ['failed', 1, 410]);
  // The notice goes through the durable system mail queue.
  assert.equal(await runOwnerNotices(), ['done']);
  const mails = await q<{ subject: string }>(`SELECT subject FROM captured_messages WHERE :to = ANY(envelope_to)`, {
    to: owner.email,
  });
  assert.is(mails.length, 1);
  assert.match(mails[0].subject, /Webhook endpoint disabled/);
  // Disabled endpoints hear nothing more.
  await emit(tenantId, 'email.delivered');
  assert.is((await q(`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = :id`, { id: endpoint.id })).length, 1);
});

test('20 failures in a row disable the endpoint and mail the owner once', async () => {
  const { asKey, tenantId, owner } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asKey, { url: receiver.url, events: ['email.delivered'] });
  await ctx.db.sequelize.query(`UPDATE webhook_endpoints SET consecutive_failures = 19 WHERE id = :id`, {
    replacements: { id: endpoint.id },
  });
  receiver.respond = () => ({ status: 500 });
  await emit(tenantId, 'email.delivered');
  await emit(tenantId, 'email.delivered');
  await drainWebhookDeliveries(ctx);
  const [row] = await q<{ enabled: boolean; disabled_reason: string; consecutive_failures: number }>(
    `SELECT * FROM webhook_endpoints WHERE id = :id`,
    { id: endpoint.id },
  );
  assert.is(row.enabled, false);
  assert.is(row.disabled_reason, 'failing');
  const statuses = (
    await q<{ status: string }>(`SELECT status FROM webhook_deliveries WHERE endpoint_id = :id`, { id: endpoint.id })
  )
    .map((r) => r.status)
    .sort();
  assert.ok(statuses.includes('skipped') || statuses.every((s) => s === 'failed'), statuses.join());
  assert.equal(await runOwnerNotices(), ['done']);
  const mails = await q(`SELECT 1 FROM captured_messages WHERE :to = ANY(envelope_to)`, { to: owner.email });
  assert.is(mails.length, 1);
});

test('toggle switches an endpoint off and on; deliveries waiting for a switched-off endpoint are skipped', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asKey, { url: receiver.url, events: ['email.delivered'] });
  const eventId = await emit(tenantId, 'email.delivered');
  const off = await ctx.app.inject({
    method: 'PATCH',
    url: `/webhooks/endpoints/${endpoint.id}/toggle`,
    headers: asKey,
  });
  assert.is(off.statusCode, 200);
  assert.is(off.json().enabled, false);
  assert.is(off.json().disabledReason, 'manual');
  await drainWebhookDeliveries(ctx);
  assert.is(receiver.requests.length, 0);
  const [skipped] = await q<{ status: string; attempt: number }>(
    `SELECT * FROM webhook_deliveries WHERE event_id = :eventId`,
    { eventId },
  );
  assert.equal([skipped.status, skipped.attempt], ['skipped', 0]);

  await ctx.db.sequelize.query(`UPDATE webhook_endpoints SET consecutive_failures = 7 WHERE id = :id`, {
    replacements: { id: endpoint.id },
  });
  const on = await ctx.app.inject({
    method: 'PATCH',
    url: `/webhooks/endpoints/${endpoint.id}/toggle`,
    headers: asKey,
  });
  assert.is(on.json().enabled, true);
  assert.is(on.json().disabledReason, null);
  assert.is(on.json().consecutiveFailures, 0);
  await emit(tenantId, 'email.delivered');
  await drainWebhookDeliveries(ctx);
  assert.is(receiver.requests.length, 1);
});

test('replay sends the payload again as a new delivery; refused (409) while the endpoint is off', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asKey, { url: receiver.url, events: ['email.delivered'] });
  receiver.respond = () => ({ status: 500 });
  const eventId = await emit(tenantId, 'email.delivered');
  await drainWebhookDeliveries(ctx);
  const [original] = await q<{ id: string; status: string }>(
    `SELECT * FROM webhook_deliveries WHERE event_id = :eventId`,
    { eventId },
  );
  assert.is(original.status, 'failed');

  receiver.requests.length = 0;
  receiver.respond = () => ({ status: 204 });
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/endpoints/${endpoint.id}/deliveries/${original.id}/replay`,
    headers: asKey,
  });
  assert.is(res.statusCode, 202, res.body);
  const replay = res.json();
  assert.is(replay.replayOf, original.id);
  assert.is(replay.status, 'pending');
  assert.is(replay.payload.id, eventId);
  assert.is.not(replay.id, original.id);
  await drainWebhookDeliveries(ctx);
  assert.is(receiver.requests.length, 1);
  assert.is(receiver.requests[0].headers['x-service-delivery-id'], replay.id);
  assert.is(JSON.parse(receiver.requests[0].rawBody).id, eventId);
  const [done] = await q<{ status: string; status_code: number }>(`SELECT * FROM webhook_deliveries WHERE id = :id`, {
    id: replay.id,
  });
  assert.equal([done.status, done.status_code], ['succeeded', 204]);

  const missing = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/endpoints/${endpoint.id}/deliveries/${crypto.randomUUID()}/replay`,
    headers: asKey,
  });
  assert.is(missing.statusCode, 404);
  await ctx.app.inject({ method: 'PATCH', url: `/webhooks/endpoints/${endpoint.id}/toggle`, headers: asKey });
  const refused = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/endpoints/${endpoint.id}/deliveries/${original.id}/replay`,
    headers: asKey,
  });
  assert.is(refused.statusCode, 409);
  assert.is(refused.json().code, 'ENDPOINT_DISABLED');
});

test('test event: one signed `test` delivery, answered with its result', async () => {
  const { asOwner } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asOwner, { url: receiver.url, events: ['email.opened'] });
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/endpoints/${endpoint.id}/test`,
    headers: asOwner,
  });
  assert.is(res.statusCode, 200, res.body);
  const delivery = res.json();
  assert.equal([delivery.event, delivery.status, delivery.statusCode, delivery.attempt], ['test', 'succeeded', 200, 1]);
  assert.is(receiver.requests.length, 1);
  assert.is(receiver.requests[0].headers['x-service-event'], 'test');
  stripe.webhooks.constructEvent(
    receiver.requests[0].rawBody,
    String(receiver.requests[0].headers['x-service-signature']),
    endpoint.secret,
  );
  receiver.respond = () => ({ status: 500, body: 'broken' });
  const failing = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/endpoints/${endpoint.id}/test`,
    headers: asOwner,
  });
  assert.equal(
    [failing.json().status, failing.json().statusCode, failing.json().responseBody],
    ['failed', 500, 'broken'],
  );
  assert.is((await q(`SELECT 1 FROM jobs WHERE queue = 'webhook'`)).length, 0);
});

test('deliveries list: newest first, 20 by default, limit respected', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const endpoint = await createEndpoint(asKey, { url: receiver.url, events: ['email.sent'] });
  for (let i = 0; i < 23; i++) await emit(tenantId, 'email.sent', { n: i });
  const page = await ctx.app.inject({
    method: 'GET',
    url: `/webhooks/endpoints/${endpoint.id}/deliveries`,
    headers: asKey,
  });
  assert.is(page.json().data.length, 20);
  assert.is(page.json().meta.total, 23);
  assert.is(page.json().meta.limit, 20);
  const five = await ctx.app.inject({
    method: 'GET',
    url: `/webhooks/endpoints/${endpoint.id}/deliveries?limit=5`,
    headers: asKey,
  });
  assert.is(five.json().data.length, 5);
  assert.is(five.json().data[0].payload.data.n, 22);
  const del = await ctx.app.inject({ method: 'DELETE', url: `/webhooks/endpoints/${endpoint.id}`, headers: asKey });
  assert.is(del.statusCode, 200);
  assert.equal(del.json(), { ok: true });
  assert.is((await q(`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = :id`, { id: endpoint.id })).length, 0);
  await drainWebhookDeliveries(ctx);
  assert.is(receiver.requests.length, 0);
});

test.run();
