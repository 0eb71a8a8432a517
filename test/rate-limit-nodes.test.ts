// Two API nodes on one Redis enforce one rate limit exactly (issues 27, 51 §3): every hit is counted by
// Redis before it is answered, the hits of one event-loop turn together (daemon/plugins/
// rate-limit-batched-store.ts), so together the nodes admit exactly the limit and Redis counts every
// request once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin } from './helpers/fixtures.ts';
import { buildApp } from '../daemon/app.ts';
import { assertErrorBody } from './helpers/error-body.ts';

const LIMIT = 400;
const REQUESTS = 1_000;
let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: '600000' } });
});
test.after(async () => {
  await ctx?.close();
});

type Answer = Awaited<ReturnType<TestContext['app']['inject']>>;

/** The answers' statuses are 200 or 429 only; the 429s carry CONTRACT.md's body and headers. */
function tally(answers: Answer[]): { admitted: number; limited: number } {
  for (const res of answers) {
    assert.ok([200, 429].includes(res.statusCode), `${res.statusCode} ${res.body}`);
    assert.is(res.headers['x-ratelimit-limit'], String(LIMIT));
    const remaining = Number(res.headers['x-ratelimit-remaining']);
    assert.ok(remaining >= 0 && remaining <= LIMIT - 1, `X-RateLimit-Remaining ${remaining}`);
    assert.ok(Number(res.headers['x-ratelimit-reset']) >= Math.floor(Date.now() / 1000), 'X-RateLimit-Reset');
    if (res.statusCode === 429) {
      assertErrorBody(res, 429, 'RATE_LIMITED');
      assert.ok(Number(res.headers['retry-after']) >= 1, `Retry-After ${res.headers['retry-after']}`);
      assert.is(remaining, 0);
    }
  }
  const admitted = answers.filter((res) => res.statusCode === 200).length;
  return { admitted, limited: answers.length - admitted };
}

test('two nodes on one Redis admit exactly the limit, and Redis counts every request once', async () => {
  const redis = ctx.deps.redis;
  if (!redis) return; // the in-process limiter is one node's by definition
  const second = await buildApp(ctx.deps, { logger: false });
  try {
    const owner = await createAdmin(ctx.app);
    const headers = { authorization: `Bearer ${owner.token}` };
    const nodes = [ctx.app, second];
    const answers: Answer[] = [];
    // 20 clients in flight, alternating between the nodes, as a load balancer would spread them.
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < REQUESTS) {
          const node = nodes[next++ % 2];
          answers.push(await node.inject({ method: 'GET', url: '/auth/me', headers }));
        }
      }),
    );
    assert.equal(tally(answers), { admitted: LIMIT, limited: REQUESTS - LIMIT });
    // Every admitted request saw its own place in the window: remaining LIMIT − 1 … 0, each once.
    const remaining = answers
      .filter((res) => res.statusCode === 200)
      .map((res) => Number(res.headers['x-ratelimit-remaining']))
      .sort((a, b) => a - b);
    assert.equal(
      remaining,
      Array.from({ length: LIMIT }, (_, i) => i),
    );
    const key = `${ctx.deps.redisPrefix}rl:admin:${owner.id}`;
    assert.is(Number(await redis.get(key)), REQUESTS);
    const ttl = await redis.pttl(key);
    assert.ok(ttl > 0 && ttl <= 600_000, `the window's TTL is ${ttl}`);
  } finally {
    await second.close();
  }
});

test('a burst of limit + k requests at once over two nodes gets exactly k 429s', async () => {
  if (!ctx.deps.redis) return;
  const second = await buildApp(ctx.deps, { logger: false });
  try {
    for (const k of [1, 7]) {
      const owner = await createAdmin(ctx.app);
      const headers = { authorization: `Bearer ${owner.token}` };
      const nodes = [ctx.app, second];
      const answers = await Promise.all(
        Array.from({ length: LIMIT + k }, (_, i) => nodes[i % 2].inject({ method: 'GET', url: '/auth/me', headers })),
      );
      assert.equal(tally(answers), { admitted: LIMIT, limited: k }, `k = ${k}`);
    }
  } finally {
    await second.close();
  }
});

test('a node that has not seen a key asks Redis first: a fresh node refuses a spent client at once', async () => {
  if (!ctx.deps.redis) return;
  const owner = await createAdmin(ctx.app);
  const headers = { authorization: `Bearer ${owner.token}` };
  await ctx.deps.redis.set(`${ctx.deps.redisPrefix}rl:admin:${owner.id}`, String(LIMIT), 'PX', 600_000);
  const fresh = await buildApp(ctx.deps, { logger: false });
  try {
    const res = await fresh.inject({ method: 'GET', url: '/auth/me', headers });
    assert.is(res.statusCode, 429, res.body);
    assertErrorBody(res, 429, 'RATE_LIMITED');
  } finally {
    await fresh.close();
  }
});

test.run();
