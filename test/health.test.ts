// Each health route up, and with its dependency down.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { enqueueJob } from '../daemon/queue/index.ts';
import { initModels } from '../daemon/modules/models.ts';
import { buildApp } from '../daemon/app.ts';
import { connectSequelize } from '../daemon/db/index.ts';
import type { App, AppDeps } from '../daemon/app-types.ts';
import { Redis } from 'ioredis';

let ctx: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;
test.before(async () => {
  ctx = await createTestContext({ env: { QUEUE_STUCK_AFTER_MS: '2000' } });
  world = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
});

/**
 * A second app over this file's database with one dependency swapped (a dead Redis, a closed pool,
 * workers that are down). Models go back to this file's connection afterwards.
 */
async function withApp(override: (deps: AppDeps) => AppDeps, body: (app: App) => Promise<void>) {
  const app = await buildApp(override(ctx.deps), { logger: false });
  try {
    await body(app);
  } finally {
    await app.close();
    initModels(ctx.db.sequelize);
  }
}

test('/health: alive', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/health' });
  assert.is(res.statusCode, 200);
  assert.is(res.json().status, 'ok');
  assert.type(res.json().uptimeSeconds, 'number');
});

test('/health/ready: database, migrations and (api role) no workers needed', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
  assert.is(res.statusCode, 200, res.body);
  const body = res.json();
  assert.is(body.status, 'ready');
  assert.ok(body.checks.database.ok);
  assert.equal(body.checks.migrations, { ok: true, pending: [] });
  assert.equal(body.checks.workers, { ok: true, role: 'api', names: [] });
});

test('/health/ready: 503 when the worker threads are not alive', async () => {
  const down = { alive: () => false, names: () => ['send-worker'] };
  await withApp(
    (deps) => ({ ...deps, config: { ...deps.config, role: 'all' }, workers: down }),
    async (app) => {
      const res = await app.inject({ method: 'GET', url: '/health/ready' });
      assert.is(res.statusCode, 503);
      assert.is(res.json().status, 'not-ready');
      assert.equal(res.json().checks.workers, { ok: false, role: 'all', names: ['send-worker'] });
    },
  );
});

test('/health/db: up, and 503 when the database is gone', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/health/db' });
  assert.is(res.statusCode, 200);
  assert.is(res.json().ok, true);
  assert.is(res.json().embedded, ctx.db.embedded);

  const closed = connectSequelize(ctx.databaseUrl);
  await closed.close();
  await withApp(
    (deps) => ({ ...deps, db: { ...deps.db, sequelize: closed } }),
    async (app) => {
      const db = await app.inject({ method: 'GET', url: '/health/db' });
      assert.is(db.statusCode, 503);
      assert.is(db.json().ok, false);
      assert.type(db.json().error, 'string');
      const ready = await app.inject({ method: 'GET', url: '/health/ready' });
      assert.is(ready.statusCode, 503);
      assert.is(ready.json().checks.database.ok, false);
      const otherWorld = { authorization: world.asKey.authorization };
      const queues = await app.inject({ method: 'GET', url: '/health/queues', headers: otherWorld });
      // The statistics read the closed database (the key may come from the cache): a 503, never a 500.
      assertErrorBody(queues, 503, 'DATABASE_UNAVAILABLE');
    },
  );
});

test('/health/redis: mode redis when REDIS_URL is set, memory otherwise', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/health/redis' });
  assert.is(res.statusCode, 200);
  assert.is(res.json().mode, process.env.REDIS_URL ? 'redis' : 'memory');
  assert.is(res.json().ok, true);
  if (process.env.REDIS_URL) {
    await withApp(
      (deps) => ({ ...deps, redis: null }),
      async (app) => {
        const memory = await app.inject({ method: 'GET', url: '/health/redis' });
        assert.equal(memory.json(), { ok: true, mode: 'memory' });
      },
    );
  }
});

test('/health/redis: 503 with mode redis when Redis does not answer', async () => {
  const dead = new Redis('redis://127.0.0.1:1', {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
  });
  dead.on('error', () => {});
  await withApp(
    (deps) => ({ ...deps, redis: dead }),
    async (app) => {
      const res = await app.inject({ method: 'GET', url: '/health/redis' });
      assert.is(res.statusCode, 503);
      assert.is(res.json().mode, 'redis');
      assert.is(res.json().ok, false);
      assert.type(res.json().error, 'string');
      // The API keeps serving with the limiter's store down.
      const alive = await app.inject({ method: 'GET', url: '/health' });
      assert.is(alive.statusCode, 200);
      const limited = await app.inject({
        method: 'GET',
        url: '/auth/me',
        headers: { authorization: world.asOwner.authorization },
      });
      assert.is(limited.statusCode, 200, 'the rate limiter lets requests through while its store is down');
    },
  );
  dead.disconnect();
});

test('/health/queues: 401 without a bearer token, with a bad one', async () => {
  assertErrorBody(await ctx.app.inject({ method: 'GET', url: '/health/queues' }), 401, 'UNAUTHORIZED');
  assertErrorBody(
    await ctx.app.inject({ method: 'GET', url: '/health/queues', headers: { authorization: 'Bearer nope' } }),
    401,
    'UNAUTHORIZED',
  );
});

test('/health/queues: per-queue depth, age, running; stuck when work waits too long (JWT or API key)', async () => {
  const idle = await ctx.app.inject({
    method: 'GET',
    url: '/health/queues',
    headers: { authorization: world.asOwner.authorization },
  });
  assert.is(idle.statusCode, 200, idle.body);
  const before = idle.json();
  assert.is(before.ok, true);
  assert.is(before.stuckAfterMs, 2000);
  for (const queue of ['send', 'scheduled', 'webhook', 'maintenance', 'system', 'campaign']) {
    assert.equal(before.queues[queue], {
      depth: 0,
      oldestWaitingAgeMs: 0,
      running: 0,
      scheduled: 0,
      failed: 0,
      stuck: false,
    });
  }

  const sequelize = ctx.db.sequelize;
  await enqueueJob(sequelize, { queue: 'webhook', payload: {}, runAt: new Date(Date.now() - 10_000) });
  await enqueueJob(sequelize, { queue: 'webhook', payload: {} });
  await enqueueJob(sequelize, { queue: 'webhook', payload: {}, runAt: new Date(Date.now() + 3_600_000) });
  await sequelize.query(
    `UPDATE jobs SET locked_by = 'w', locked_until = now() + interval '1 minute' WHERE id = (SELECT max(id) FROM jobs WHERE queue = 'webhook' AND run_at <= now())`,
  );

  const res = await ctx.app.inject({ method: 'GET', url: '/health/queues', headers: world.asKey });
  assert.is(res.statusCode, 200, res.body);
  const webhook = res.json().queues.webhook;
  assert.is(webhook.depth, 1);
  assert.is(webhook.running, 1);
  assert.is(webhook.scheduled, 1);
  assert.ok(
    webhook.oldestWaitingAgeMs >= 9_000 && webhook.oldestWaitingAgeMs < 120_000,
    String(webhook.oldestWaitingAgeMs),
  );
  assert.is(webhook.stuck, true);
  assert.is(res.json().ok, false);
  assert.is(res.json().queues.send.stuck, false);
  await sequelize.query(`DELETE FROM jobs WHERE queue = 'webhook'`);
});

test.run();
