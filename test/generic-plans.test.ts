// Declared statements are planned once per connection (db/sql.ts GENERIC_PLANS): both pools open their
// connections to PostgreSQL with plan_cache_mode = force_generic_plan, and a declared statement run in a
// Sequelize transaction is the named prepared statement on the transaction's client, not an unnamed one
// parsed and planned again at every run. Under the default mode, a statement on a partitioned table
// (email_logs) was custom-planned at every execution: the test checks the plan counts PostgreSQL keeps.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type pg from 'pg';
import type { Transaction } from 'sequelize';
import { clientOf, declare, sequelizeRows } from '../daemon/db/sql.ts';
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
const TENANT = '00000000-0000-4000-8000-000000000001';

/** The plan counts PostgreSQL keeps for a prepared statement of this session (none: never prepared). */
async function planCounts(client: pg.ClientBase, name: string) {
  const { rows } = await client.query<{ generic_plans: string; custom_plans: string }>(
    'SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1',
    [name],
  );
  return rows.map((row) => ({ generic: Number(row.generic_plans), custom: Number(row.custom_plans) }));
}

test('both pools open their connections to PostgreSQL with generic plans', async () => {
  if (ctx.db.embedded) return; // PGlite serves every client from one session: statements run unnamed there.
  const { rows } = await ctx.db.sql.pool.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode');
  assert.is(rows[0].plan_cache_mode, 'force_generic_plan', 'the plain pool');
  const [shown] = await ctx.db.sequelize.query<{ plan_cache_mode: string }>('SHOW plan_cache_mode', {
    type: 'SELECT' as never,
  });
  assert.is(shown.plan_cache_mode, 'force_generic_plan', "Sequelize's pool");
});

test('a declared statement on the plain pool runs with one generic plan per connection', async () => {
  if (ctx.db.embedded) return;
  const client = await ctx.db.sql.pool.connect();
  try {
    for (const days of [1, 30, 365]) {
      await ctx.db.sql.rows(LOGS_OF_TENANT, [TENANT, new Date(Date.now() - days * 86_400_000)], client);
    }
    assert.equal(await planCounts(client, LOGS_OF_TENANT.name), [{ generic: 3, custom: 0 }]);
  } finally {
    client.release();
  }
});

test('in a Sequelize transaction a declared statement is the named one, planned generically', async () => {
  if (ctx.db.embedded) return;
  const { sequelize } = ctx.db;
  const counted = await sequelize.transaction(async (transaction: Transaction) => {
    const answers: number[] = [];
    for (const days of [1, 30, 365]) {
      const [row] = await sequelizeRows<{ n: number }>(
        sequelize,
        LOGS_OF_TENANT,
        [TENANT, new Date(Date.now() - days * 86_400_000)],
        transaction,
      );
      answers.push(row.n);
    }
    return { answers, plans: await planCounts(clientOf(transaction), LOGS_OF_TENANT.name) };
  });
  assert.equal(counted.answers, [0, 0, 0]);
  assert.equal(counted.plans, [{ generic: 3, custom: 0 }], 'prepared once on the transaction’s client');
  // Outside a transaction it still runs (through Sequelize, unnamed) and answers the same.
  const [row] = await sequelizeRows<{ n: number }>(sequelize, LOGS_OF_TENANT, [TENANT, new Date(0)]);
  assert.is(row.n, 0);
});

test.run();
