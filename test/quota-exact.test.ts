// The monthly quota is exact under concurrency: whatever the concurrency, the batch sizes or the
// number of API nodes, accepted sends never pass 110 % of the limit (issue 11 §4). The reservation
// is part of the accept statement (emails/insert-accepted.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { initModels } from '../daemon/modules/models.ts';

let ctx: TestContext;

test.before(async () => {
  ctx = await createTestContext();
});

test.after(async () => {
  await ctx?.close();
});

const message = (n: number) => ({
  from: 'app@acme.test',
  to: `reader${n}@example.test`,
  subject: `Hello ${n}`,
  textBody: 'Hi',
});

async function tenantWithLimit(limit: number) {
  const world = await createWorld(ctx.app);
  await ctx.db.sequelize.query('UPDATE tenants SET monthly_limit = :limit WHERE id = :id', {
    replacements: { limit, id: world.tenantId },
  });
  return world;
}

async function counts(tenantId: string): Promise<{ logs: number; jobs: number; counter: number }> {
  const [row] = await ctx.db.sequelize.query<{ logs: number; jobs: number; counter: number }>(
    `SELECT (SELECT count(*) FROM email_logs WHERE tenant_id = :tenantId AND NOT test_mode)::int AS logs,
            (SELECT count(*) FROM jobs WHERE tenant_id = :tenantId AND queue = 'send')::int AS jobs,
            (SELECT COALESCE(SUM(used), 0) FROM quota_usage WHERE tenant_id = :tenantId)::int AS counter`,
    { replacements: { tenantId }, type: QueryTypes.SELECT },
  );
  return row;
}

test('40 concurrent single sends with a limit of 10 accept exactly 11 (the 110 % mark); the rest get 429 QUOTA_EXCEEDED', async () => {
  const world = await tenantWithLimit(10);
  const answers = await Promise.all(
    Array.from({ length: 40 }, (_, n) =>
      ctx.app.inject({ method: 'POST', url: '/emails/send', headers: world.asKey, payload: message(n) }),
    ),
  );
  const accepted = answers.filter((answer) => answer.statusCode === 202);
  const refused = answers.filter((answer) => answer.statusCode === 429);
  assert.is(accepted.length, 11, answers.map((answer) => answer.statusCode).join());
  assert.is(refused.length, 29);
  for (const answer of refused) {
    assert.is(answer.json().code, 'QUOTA_EXCEEDED');
    assert.ok(Number(answer.headers['retry-after']) > 0);
    assert.is(answer.headers['x-quota-limit'], '10');
  }
  assert.equal(await counts(world.tenantId), { logs: 11, jobs: 11, counter: 11 });
});

test('concurrent batches never pass the mark: a batch that does not fit is refused whole, and test keys are not counted', async () => {
  const world = await tenantWithLimit(10);
  const batch = (offset: number) => ({
    from: 'app@acme.test',
    subject: 'News',
    textBody: 'Hi',
    recipients: [0, 1, 2].map((n) => ({ to: `reader${offset + n}@example.test` })),
  });
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, n) =>
      ctx.app.inject({ method: 'POST', url: '/emails/batch', headers: world.asKey, payload: batch(n * 3) }),
    ),
  );
  const accepted = answers.filter((answer) => answer.statusCode === 202);
  assert.is(accepted.length, 3, answers.map((answer) => `${answer.statusCode} ${answer.body.slice(0, 80)}`).join('\n'));
  for (const answer of accepted) assert.is(answer.json().accepted.length, 3);
  assert.equal(await counts(world.tenantId), { logs: 9, jobs: 9, counter: 9 });

  // Two single sends still fit (11), a third does not.
  const singles = await Promise.all(
    [0, 1, 2].map((n) =>
      ctx.app.inject({ method: 'POST', url: '/emails/send', headers: world.asKey, payload: message(100 + n) }),
    ),
  );
  assert.equal(singles.map((answer) => answer.statusCode).sort(), [202, 202, 429]);
  assert.equal(await counts(world.tenantId), { logs: 11, jobs: 11, counter: 11 });

  const testKey = await createApiKey(world.tenantId, { environment: 'test' });
  const free = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: { authorization: `Bearer ${testKey.key}` },
    payload: message(200),
  });
  assert.is(free.statusCode, 202, free.body);
  assert.equal(await counts(world.tenantId), { logs: 11, jobs: 12, counter: 11 });
});

test('two API nodes on one database together accept exactly 11; a refused send with an Idempotency-Key leaves no key behind', async () => {
  const second = await createTestContext({
    database: { url: ctx.databaseUrl, dataDir: ctx.dataDir, drop: async () => {} },
  });
  try {
    const world = await tenantWithLimit(10);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, n) =>
        (n % 2 ? second : ctx).app.inject({
          method: 'POST',
          url: '/emails/send',
          headers: world.asKey,
          payload: message(n),
        }),
      ),
    );
    assert.is(answers.filter((answer) => answer.statusCode === 202).length, 11);
    assert.equal(await counts(world.tenantId), { logs: 11, jobs: 11, counter: 11 });

    const keyed = await ctx.app.inject({
      method: 'POST',
      url: '/emails/send',
      headers: { ...world.asKey, 'idempotency-key': 'over-quota' },
      payload: message(999),
    });
    assert.is(keyed.statusCode, 429);
    const [kept] = await ctx.db.sequelize.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'over-quota'`,
      { type: QueryTypes.SELECT },
    );
    assert.is(kept.n, 0);
  } finally {
    await second.close();
    // The Sequelize models are bound by the last buildApp (module state, issue 16): give them back.
    initModels(ctx.db.sequelize);
  }
});

test('migration 0105 folds the sharded counters of each cycle into the one exact row', async () => {
  const world = await tenantWithLimit(100);
  const cycle = '2026-11-01T00:00:00Z';
  await ctx.db.sequelize.query(
    `INSERT INTO quota_usage (tenant_id, cycle_start, shard, used) VALUES (:t, :c, 0, 2), (:t, :c, 7, 3), (:t, :c, 41, 5), (:t, '2026-10-01T00:00:00Z', 3, 4)`,
    { replacements: { t: world.tenantId, c: cycle } },
  );
  const { up } = await import('../migrations/0105-exact-quota.ts');
  await up({
    context: {
      sequelize: ctx.db.sequelize,
      sql: async (statements: string) => void (await ctx.db.sequelize.query(statements)),
    },
  } as never);
  const rows = await ctx.db.sequelize.query<{ cycle_start: Date; shard: number; used: number }>(
    'SELECT cycle_start, shard, used FROM quota_usage WHERE tenant_id = :t ORDER BY cycle_start',
    { replacements: { t: world.tenantId }, type: QueryTypes.SELECT },
  );
  assert.equal(
    rows.map((row) => [new Date(row.cycle_start).toISOString().slice(0, 7), row.shard, row.used]),
    [
      ['2026-10', 0, 4],
      ['2026-11', 0, 10],
    ],
  );
});

test.run();
