// Declared statements are planned once per connection (db/sql.ts HOT_PATH_SETTINGS): the plain pool opens
// its connections to PostgreSQL with plan_cache_mode = force_generic_plan and sequential scans off, and
// Sql.inTransaction runs declared statements in a Sequelize transaction the same way (named, generic),
// where before they ran unnamed, parsed and planned at every run. Under the default mode a statement on
// a partitioned table (email_logs) was custom-planned at every execution: the test reads the plan counts
// PostgreSQL keeps. A generic plan made while a table is empty must still reach its rows by index once
// the table has filled (EXPLAIN EXECUTE of the prepared statement).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type pg from 'pg';
import { QueryTypes, type Transaction } from 'sequelize';
import { clientOf, declare } from '../daemon/db/sql.ts';
import { createTestContext, type TestContext } from './helpers/context.ts';

let ctx: TestContext;

test.before(async () => {
  ctx = await createTestContext();
});

test.after(async () => {
  await ctx.close();
});

/** A statement on the partitioned email_logs whose custom plan prunes partitions by its values. */
const LOGS_OF_TENANT = declare(
  'test.generic-plans.logs-of-tenant',
  `SELECT count(*)::int AS n FROM email_logs WHERE tenant_id = $1::uuid AND created_at >= $2::timestamptz`,
);
/** The shape of the outcome statements: the batch's ids joined to a table that starts empty. */
const JOBS_OF_BATCH = declare(
  'test.generic-plans.jobs-of-batch',
  `SELECT j.id FROM unnest($1::bigint[]) AS o(id) JOIN jobs j ON j.id = o.id`,
);
const TENANT = '00000000-0000-4000-8000-000000000001';
const daysAgo = (days: number) => new Date(Date.now() - days * 86_400_000);

/** The plan counts PostgreSQL keeps for a prepared statement of this session (none: never prepared). */
async function planCounts(client: pg.ClientBase, name: string) {
  const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>(
    'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1',
    [name],
  );
  return rows.map((row) => ({ generic: Number(row.generic_plans), custom: Number(row.custom_plans) }));
}

async function settingsOf(runner: { query: pg.ClientBase['query'] }) {
  const { rows } = await runner.query<{ plan_cache_mode: string; enable_seqscan: string }>(
    `SELECT current_setting('plan_cache_mode') AS plan_cache_mode, current_setting('enable_seqscan') AS enable_seqscan`,
  );
  return rows[0];
}

test('the plain pool plans generically with sequential scans off; Sequelize’s own queries keep the defaults', async () => {
  if (ctx.db.embedded) return; // PGlite serves every client from one session: statements run unnamed there.
  assert.equal(await settingsOf(ctx.db.sql.pool), { plan_cache_mode: 'force_generic_plan', enable_seqscan: 'off' });
  // No LLVM compile for a statement the disabled sequential scan costs above 10¹⁰ (db/sql.ts).
  const { rows } = await ctx.db.sql.pool.query<{ jit: string }>(`SELECT current_setting('jit') AS jit`);
  assert.is(rows[0].jit, 'off');
  const sequelizeSettings = () =>
    ctx.db.sequelize.query<{ plan_cache_mode: string; enable_seqscan: string }>(
      `SELECT current_setting('plan_cache_mode') AS plan_cache_mode, current_setting('enable_seqscan') AS enable_seqscan`,
      { type: QueryTypes.SELECT },
    );
  assert.equal(await sequelizeSettings(), [{ plan_cache_mode: 'auto', enable_seqscan: 'on' }]);
});

test('a declared statement on the plain pool runs with one generic plan per connection', async () => {
  if (ctx.db.embedded) return;
  const client = await ctx.db.sql.pool.connect();
  try {
    for (const days of [1, 30, 365]) await ctx.db.sql.rows(LOGS_OF_TENANT, [TENANT, daysAgo(days)], client);
    assert.equal(await planCounts(client, LOGS_OF_TENANT.name), [{ generic: 3, custom: 0 }]);
  } finally {
    client.release();
  }
});

test('in a Sequelize transaction, Sql.inTransaction runs the named statement generically, for that transaction', async () => {
  if (ctx.db.embedded) return;
  const { sequelize } = ctx.db;
  let client: pg.ClientBase | null = null;
  const seen = await sequelize.transaction(async (transaction: Transaction) => {
    const run = await ctx.db.sql.inTransaction(transaction);
    client = clientOf(transaction);
    const answers: number[] = [];
    for (const days of [1, 30, 365])
      answers.push((await run<{ n: number }>(LOGS_OF_TENANT, [TENANT, daysAgo(days)]))[0].n);
    return { answers, settings: await settingsOf(client), plans: await planCounts(client, LOGS_OF_TENANT.name) };
  });
  assert.equal(seen.answers, [0, 0, 0]);
  assert.equal(seen.settings, { plan_cache_mode: 'force_generic_plan', enable_seqscan: 'off' });
  assert.equal(seen.plans, [{ generic: 3, custom: 0 }], 'prepared once on the transaction’s client');
  assert.equal(await settingsOf(client!), { plan_cache_mode: 'auto', enable_seqscan: 'on' }, 'only in it');
});

test('a generic plan made while the table was empty reads it by index once it has filled', async () => {
  if (ctx.db.embedded) return;
  const client = await ctx.db.sql.pool.connect();
  try {
    await client.query(`DELETE FROM jobs WHERE queue = 'test-generic-plans'`);
    assert.equal(await ctx.db.sql.rows(JOBS_OF_BATCH, [['1', '2']], client), []);
    const { rows: made } = await client.query<{ id: string }>(
      `INSERT INTO jobs (queue) SELECT 'test-generic-plans' FROM generate_series(1, 20000) RETURNING id`,
    );
    const batch = made.slice(100, 108).map((row) => row.id);
    assert.is((await ctx.db.sql.rows(JOBS_OF_BATCH, [batch], client)).length, 8);
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN EXECUTE "${JOBS_OF_BATCH.name}"('{${batch.join(',')}}')`,
    );
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    assert.match(plan, /Index (Only )?Scan using jobs_pkey/);
    assert.not.match(plan, /Seq Scan/);
    assert.equal(await planCounts(client, JOBS_OF_BATCH.name), [{ generic: 3, custom: 0 }]);
  } finally {
    await client.query(`DELETE FROM jobs WHERE queue = 'test-generic-plans'`);
    client.release();
  }
});

test.run();
