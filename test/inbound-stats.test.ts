// GET /inbound/stats and what reads it (issue 52 §4): mail delivered by swaks to the real listener, webhook
// routes to a receiver that answers and to an endpoint nobody listens on, a store route; the counts by
// status over 24 h and 7 days, per route, the failing endpoint with its last error (retrying, then failed
// for good, then not failing once a replay reached it), scopes and tenant isolation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { runDueDeliveries } from './helpers/webhook-receiver.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { freePort } from './helpers/swaks.ts';
import {
  addRoute,
  api,
  ctx,
  endpoint,
  q,
  receiver,
  send,
  setUp,
  tearDown,
  verifiedDomain,
  world,
} from './helpers/inbound-routing-world.ts';

test.before(setUp);
test.after(tearDown);

const DOMAIN = 'stats.acme.example';
const counts = (c: Partial<Record<'received' | 'delivered' | 'failed' | 'stored' | 'forwarded', number>>) => {
  const all = { received: 0, delivered: 0, failed: 0, stored: 0, forwarded: 0, ...c };
  return { total: Object.values(all).reduce((a, b) => a + b, 0), ...all };
};
const statusOf = async (id: string) =>
  (await q<{ status: string }>(`SELECT status FROM inbound_messages WHERE id = :id`, { id }))[0].status;

test('GET /inbound/stats: counts by status over 24 h and 7 days per route, and the endpoints failing with why', async () => {
  await verifiedDomain(DOMAIN);
  const dead = await api('POST', '/webhooks/endpoints', {
    url: `http://127.0.0.1:${await freePort()}/inbound`,
    events: ['inbound.received'],
  });
  assert.is(dead.statusCode, 201, dead.body);
  const ok = await addRoute({ address: `ok@${DOMAIN}`, action: 'webhook', endpointId: endpoint.id });
  const broken = await addRoute({ address: `broken@${DOMAIN}`, action: 'webhook', endpointId: dead.json().id });
  const keep = await addRoute({ address: `keep@${DOMAIN}`, action: 'store' });
  for (const to of [`ok@${DOMAIN}`, `broken@${DOMAIN}`, `keep@${DOMAIN}`, `ok@${DOMAIN}`])
    assert.match((await send([to])).output, /<-  250 /);
  await runDueDeliveries(ctx);
  const rows = await q<{ id: string; recipient: string; status: string }>(
    `SELECT id, recipient, status FROM inbound_messages WHERE tenant_id = :t ORDER BY created_at`,
    { t: world.tenantId },
  );
  assert.equal(rows.map((r) => [r.recipient, r.status]).sort(), [
    [`broken@${DOMAIN}`, 'received'],
    [`keep@${DOMAIN}`, 'stored'],
    [`ok@${DOMAIN}`, 'delivered'],
    [`ok@${DOMAIN}`, 'delivered'],
  ]);
  // One of ok@'s two messages is two days old: in the week, not in the day.
  const older = rows.find((r) => r.recipient === `ok@${DOMAIN}`)!;
  await ctx.db.sequelize.query(
    `UPDATE inbound_messages SET created_at = now() - interval '2 days' WHERE tenant_id = :t AND id = :id`,
    { replacements: { t: world.tenantId, id: older.id } },
  );
  const brokenId = rows.find((r) => r.recipient === `broken@${DOMAIN}`)!.id;

  const first = await api('GET', '/inbound/stats');
  assert.is(first.statusCode, 200, first.body);
  const stats = first.json();
  assert.ok(Math.abs(Date.parse(stats.last24h.since) - (Date.now() - 86_400_000)) < 60_000, stats.last24h.since);
  assert.ok(Math.abs(Date.parse(stats.last7d.since) - (Date.now() - 7 * 86_400_000)) < 60_000, stats.last7d.since);
  assert.equal(stats.last24h, { since: stats.last24h.since, ...counts({ received: 1, delivered: 1, stored: 1 }) });
  assert.equal(stats.last7d, { since: stats.last7d.since, ...counts({ received: 1, delivered: 2, stored: 1 }) });
  assert.equal(stats.routes, [
    {
      routeId: ok.id,
      address: `ok@${DOMAIN}`,
      action: 'webhook',
      last24h: counts({ delivered: 1 }),
      last7d: counts({ delivered: 2 }),
    },
    {
      routeId: broken.id,
      address: `broken@${DOMAIN}`,
      action: 'webhook',
      last24h: counts({ received: 1 }),
      last7d: counts({ received: 1 }),
    },
    {
      routeId: keep.id,
      address: `keep@${DOMAIN}`,
      action: 'store',
      last24h: counts({ stored: 1 }),
      last7d: counts({ stored: 1 }),
    },
  ]);
  // The dead endpoint's first attempt failed: retrying, its error named.
  assert.is(stats.failingEndpoints.length, 1, first.body);
  const [failing] = stats.failingEndpoints;
  assert.equal(
    { ...failing, lastError: undefined, lastFailedAt: undefined },
    {
      endpointId: dead.json().id,
      url: dead.json().url,
      enabled: true,
      consecutiveFailures: 1,
      failed: 0,
      retrying: 1,
      lastError: undefined,
      lastFailedAt: undefined,
    },
  );
  const [delivery] = await q<{ error: string; delivered_at: Date }>(
    `SELECT error, delivered_at FROM webhook_deliveries WHERE tenant_id = :t AND endpoint_id = :e`,
    { t: world.tenantId, e: dead.json().id },
  );
  assert.is(failing.lastError, delivery.error);
  assert.match(failing.lastError, /ECONNREFUSED|refused/i);
  assert.is(failing.lastFailedAt, delivery.delivered_at.toISOString());

  // Its retries run out: the message and the count say failed, the endpoint failed 1, retrying 0.
  await ctx.db.sequelize.query(
    `UPDATE webhook_deliveries SET attempt = max_attempts - 1, due_at = now() WHERE tenant_id = :t AND endpoint_id = :e`,
    { replacements: { t: world.tenantId, e: dead.json().id } },
  );
  await runDueDeliveries(ctx);
  assert.is(await statusOf(brokenId), 'failed');
  const exhausted = (await api('GET', '/inbound/stats')).json();
  assert.equal(exhausted.last24h, {
    since: exhausted.last24h.since,
    ...counts({ failed: 1, delivered: 1, stored: 1 }),
  });
  assert.equal(
    exhausted.routes.find((r: { routeId: string }) => r.routeId === broken.id).last7d,
    counts({ failed: 1 }),
  );
  assert.equal(
    exhausted.failingEndpoints.map((e: { endpointId: string; failed: number; retrying: number }) => [
      e.endpointId,
      e.failed,
      e.retrying,
    ]),
    [[dead.json().id, 1, 0]],
  );

  // The endpoint fixed and the message replayed: delivered, and the endpoint is no longer failing.
  await ctx.db.sequelize.query(`UPDATE webhook_endpoints SET url = :url WHERE id = :id`, {
    replacements: { url: receiver.url, id: dead.json().id },
  });
  const replayed = await api('POST', `/inbound/messages/${brokenId}/replay`);
  assert.is(replayed.statusCode, 200, replayed.body);
  assert.is(replayed.json().status, 'received');
  assert.is(await statusOf(brokenId), 'received');
  await runDueDeliveries(ctx);
  assert.is(await statusOf(brokenId), 'delivered');
  const fixed = (await api('GET', '/inbound/stats')).json();
  assert.equal(fixed.failingEndpoints, []);
  assert.equal(fixed.last24h, { since: fixed.last24h.since, ...counts({ delivered: 2, stored: 1 }) });

  // inbound:read is enough; without it a 403 in the error body; another tenant sees none of it.
  const readOnly = await createApiKey(world.tenantId, { scopes: ['inbound:read'] });
  const asRead = await api('GET', '/inbound/stats', undefined, { authorization: `Bearer ${readOnly.key}` });
  assert.equal(asRead.json().routes, fixed.routes);
  const noScope = await createApiKey(world.tenantId, { scopes: ['email:send'] });
  assertErrorBody(await api('GET', '/inbound/stats', undefined, { authorization: `Bearer ${noScope.key}` }), 403);
  const other = await createWorld(ctx.app);
  const theirs = (await api('GET', '/inbound/stats', undefined, other.asKey)).json();
  assert.equal([theirs.last7d.total, theirs.routes, theirs.failingEndpoints], [0, [], []]);
});

test.run();
