// Two API nodes on one Redis enforce one rate limit (issue 27): each counts in its process and
// sends its hits to the shared counter in batches (daemon/plugins/rate-limit-batched-store.ts), so
// together they admit at most the limit plus one batch per other node, and Redis ends up counting
// every request exactly once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin } from './helpers/fixtures.ts';
import { buildApp } from '../daemon/app.ts';
import { batchOf } from '../daemon/plugins/rate-limit-batched-store.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { waitFor } from './helpers/wait.ts';

const LIMIT = 400;
const REQUESTS = 1_000;
let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_MAX: String(LIMIT), RATE_LIMIT_WINDOW_MS: '600000' } });
});
test.after(async () => {
  await ctx?.close();
});

test('two nodes on one Redis admit the limit, at most one batch more, and Redis counts every request once', async () => {
  const redis = ctx.deps.redis;
  if (!redis) return; // the in-process limiter is one node's by definition
  const second = await buildApp(ctx.deps, { logger: false });
  try {
    const owner = await createAdmin(ctx.app);
    const headers = { authorization: `Bearer ${owner.token}` };
    const nodes = [ctx.app, second];
    const statuses: number[] = [];
    const remaining: number[] = [];
    // 20 clients in flight, alternating between the nodes, as a load balancer would spread them.
    let next = 0;
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < REQUESTS) {
          const node = nodes[next++ % 2];
          const res = await node.inject({ method: 'GET', url: '/auth/me', headers });
          statuses.push(res.statusCode);
          remaining.push(Number(res.headers['x-ratelimit-remaining']));
        }
      }),
    );
    const admitted = statuses.filter((status) => status === 200).length;
    const limited = statuses.filter((status) => status === 429).length;
    assert.is(admitted + limited, REQUESTS, `only 200 and 429: ${[...new Set(statuses)].join(', ')}`);
    const tolerance = batchOf(LIMIT) * (nodes.length - 1);
    assert.ok(tolerance > 0 && tolerance <= LIMIT / 20, `tolerance ${tolerance}`);
    assert.ok(admitted >= LIMIT, `admitted ${admitted}, the limit is ${LIMIT}`);
    assert.ok(admitted <= LIMIT + tolerance, `admitted ${admitted}, at most ${LIMIT} + ${tolerance}`);
    assert.ok(
      remaining.every((n) => n >= 0 && n <= LIMIT - 1),
      'X-RateLimit-Remaining within [0, limit)',
    );
    // Every request reaches the shared counter once, within a flush.
    const key = `${ctx.deps.redisPrefix}rl:admin:${owner.id}`;
    await waitFor('Redis to count every request', async () => Number(await redis.get(key)) === REQUESTS, {
      timeoutMs: 5_000,
      intervalMs: 10,
    });
    const ttl = await redis.pttl(key);
    assert.ok(ttl > 0 && ttl <= 600_000, `the window's TTL is ${ttl}`);
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
