// Rate limits: headers on every answer, 429 with Retry-After and a sentence, one bucket per client
// (API key, else admin, else address), the sign-in family's own 15-per-15-minutes limit, and no
// fresh bucket from a forged X-Forwarded-For unless TRUST_PROXY is on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createWorld } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { buildApp } from '../daemon/app.ts';
import { initModels } from '../daemon/modules/models.ts';

let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_MAX: '5', RATE_LIMIT_WINDOW_MS: '60000' } });
});
test.after(async () => {
  await ctx?.close();
});

function assertLimited(res: Awaited<ReturnType<TestContext['app']['inject']>>, limit: number) {
  const body = assertErrorBody(res, 429, 'RATE_LIMITED');
  const retryAfter = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After is ${res.headers['retry-after']}`);
  assert.match(body.message, new RegExp(`^Too many requests: the limit is ${limit} per .+\\. Try again in \\d+ s\\.$`));
}

test('every answer carries X-RateLimit-*; the sixth request in the window is a 429 with Retry-After', async () => {
  const owner = await createAdmin(ctx.app);
  const headers = { authorization: `Bearer ${owner.token}` };
  for (let i = 1; i <= 5; i++) {
    const res = await ctx.app.inject({ method: 'GET', url: '/auth/me', headers });
    assert.is(res.statusCode, 200, res.body);
    assert.is(res.headers['x-ratelimit-limit'], '5');
    assert.is(res.headers['x-ratelimit-remaining'], String(5 - i));
    const reset = Number(res.headers['x-ratelimit-reset']);
    // The Unix time (seconds) of the window's end (spec §8), within the 60 s window from now.
    const now = Math.floor(Date.now() / 1000);
    assert.ok(
      reset >= now && reset <= now + 61,
      `X-RateLimit-Reset is ${res.headers['x-ratelimit-reset']}, now is ${now}`,
    );
  }
  const res = await ctx.app.inject({ method: 'GET', url: '/auth/me', headers });
  assertLimited(res, 5);
  assert.is(res.headers['x-ratelimit-remaining'], '0');

  const other = await createAdmin(ctx.app);
  const fresh = await ctx.app.inject({
    method: 'GET',
    url: '/auth/me',
    headers: { authorization: `Bearer ${other.token}` },
  });
  assert.is(fresh.statusCode, 200, 'another admin has a bucket of its own');
  assert.is(fresh.headers['x-ratelimit-remaining'], '4');

  const health = await ctx.app.inject({ method: 'GET', url: '/health', headers });
  assert.is(health.statusCode, 200, 'health checks are never throttled');
});

test('an API key has its own bucket, whatever address it comes from', async () => {
  const world = await createWorld(ctx.app);
  for (let i = 0; i < 5; i++) {
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/suppressions',
      headers: world.asKey,
      remoteAddress: `10.1.0.${i + 1}`,
    });
    assert.ok(res.statusCode < 400, res.body);
  }
  assertLimited(
    await ctx.app.inject({ method: 'GET', url: '/suppressions', headers: world.asKey, remoteAddress: '10.1.0.99' }),
    5,
  );
});

test('a forged X-Forwarded-For does not buy an anonymous client a fresh bucket (trustProxy off)', async () => {
  const from = { remoteAddress: '10.2.0.7' };
  for (let i = 0; i < 5; i++) {
    const res = await ctx.app.inject({
      method: 'GET',
      url: '/webhooks/endpoints',
      ...from,
      headers: { 'x-forwarded-for': `203.0.113.${i}` },
    });
    assertErrorBody(res, 401, 'UNAUTHORIZED');
  }
  for (const forged of ['203.0.113.200', '198.51.100.1, 10.2.0.7', '127.0.0.1']) {
    assertLimited(
      await ctx.app.inject({
        method: 'GET',
        url: '/webhooks/endpoints',
        ...from,
        headers: { 'x-forwarded-for': forged },
      }),
      5,
    );
  }
  const elsewhere = await ctx.app.inject({ method: 'GET', url: '/webhooks/endpoints', remoteAddress: '10.2.0.8' });
  assert.is(elsewhere.statusCode, 401, 'another address is another client');
});

test('with TRUST_PROXY=true the client address comes from X-Forwarded-For', async () => {
  const proxied = await createTestContext({ env: { RATE_LIMIT_MAX: '2', TRUST_PROXY: 'true' } });
  try {
    const via = (client: string) =>
      proxied.app.inject({
        method: 'GET',
        url: '/webhooks/endpoints',
        remoteAddress: '10.3.0.1',
        headers: { 'x-forwarded-for': client },
      });
    await via('203.0.113.1');
    await via('203.0.113.1');
    assertLimited(await via('203.0.113.1'), 2);
    assert.is(
      (await via('203.0.113.2')).statusCode,
      401,
      'behind a trusted proxy each forwarded client has its bucket',
    );
  } finally {
    await proxied.close();
    // Models are bound to the last connection initModels saw: give them back to this file's.
    initModels(ctx.db.sequelize);
  }
});

test('the sign-in family: 15 attempts per 15 minutes per address on each route, then 429', async () => {
  const routes: Array<{ url: string; payload: Record<string, unknown> }> = [
    { url: '/auth/login', payload: { email: 'nobody@example.test', password: 'wrong-password-123' } },
    { url: '/auth/register', payload: {} },
    { url: '/auth/forgot-password', payload: {} },
    { url: '/auth/reset-password', payload: {} },
    { url: '/auth/login/verify-2fa', payload: {} },
  ];
  for (const [index, route] of routes.entries()) {
    const remoteAddress = `10.4.0.${index + 1}`;
    for (let i = 1; i <= 15; i++) {
      const res = await ctx.app.inject({ method: 'POST', url: route.url, payload: route.payload, remoteAddress });
      assert.ok(res.statusCode === 400 || res.statusCode === 401, `${route.url}: ${res.statusCode} ${res.body}`);
      assert.is(res.headers['x-ratelimit-limit'], '15', route.url);
      assert.is(res.headers['x-ratelimit-remaining'], String(15 - i), route.url);
    }
    const res = await ctx.app.inject({
      method: 'POST',
      url: route.url,
      payload: route.payload,
      remoteAddress,
      headers: { 'x-forwarded-for': '192.0.2.55' },
    });
    assertLimited(res, 15);
    assert.ok(Number(res.headers['retry-after']) > 60, 'the window is 15 minutes');
  }
});

test('with Redis, every daemon sharing it sees the same counters', async () => {
  if (!ctx.deps.redis) return;
  const owner = await createAdmin(ctx.app);
  const headers = { authorization: `Bearer ${owner.token}` };
  for (let i = 0; i < 5; i++)
    assert.is((await ctx.app.inject({ method: 'GET', url: '/auth/me', headers })).statusCode, 200);
  const second = await buildApp(ctx.deps, { logger: false });
  try {
    assertLimited(await second.inject({ method: 'GET', url: '/auth/me', headers }), 5);
  } finally {
    await second.close();
  }
});

test.run();
