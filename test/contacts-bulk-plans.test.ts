// The contacts bulk statements are planned at each run (issue 51). Planned once per connection
// (db/sql.ts HOT_PATH_SETTINGS), their generic plan was made while `contacts` was empty and kept reading
// the tenant's every contact: 981 ms a lookup at 20,000 contacts, 6.4 s an update of 1,000 at 5,000.
// The test runs the bulk on one connection from an empty table to a filled one and reads the plan counts
// PostgreSQL keeps for that connection, and that the connection plans generically again afterwards.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import type { TenantContext } from '../daemon/context.ts';
import { createSql, declare, type Sql } from '../daemon/db/sql.ts';
import { bulkUpsertContacts } from '../daemon/modules/contacts/bulk.ts';
import type { ContactDeps } from '../daemon/modules/contacts/service.ts';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';

let ctx: TestContext;
let sql: Sql;

test.before(async () => {
  ctx = await createTestContext();
  // One connection, so that the plan counts read below are those of the connection the bulk ran on.
  sql = createSql(ctx.databaseUrl, { max: 1, embedded: ctx.db.embedded });
});
test.after(async () => {
  await sql?.close();
  await ctx?.close();
});

async function onTheConnection<T extends object>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = await sql.pool.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    client.release();
  }
}

const planCounts = (name: string) =>
  onTheConnection<{ generic: number; custom: number }>(
    'SELECT generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements WHERE name = $1',
    [name],
  );

test('bulk statements are planned at each run, from an empty table to a filled one; the connection plans generically again', async () => {
  if (ctx.db.embedded) return; // PGlite: statements run unnamed, planned at each run anyway.
  const w = await createWorld(ctx.app);
  const deps = { db: { sql } } as unknown as ContactDeps;
  const tenant = { tenantId: w.tenantId } as TenantContext;

  const first = await bulkUpsertContacts(deps, tenant, {
    rows: [{ email: 'first@example.com', firstName: 'First', tags: ['a'] }],
  });
  assert.equal([first.created, first.updated, first.failed], [1, 0, 0]);
  await ctx.db.sequelize.query(
    `INSERT INTO contacts (tenant_id, email, first_name) SELECT :t, 'c' || g || '@example.com', 'C' || g FROM generate_series(1, 3000) g`,
    { replacements: { t: w.tenantId } },
  );
  const rows = Array.from({ length: 500 }, (_, i) => ({
    email: `C${i + 1}@Example.com`,
    lastName: `L${i}`,
    tags: ['b'],
  }));
  const second = await bulkUpsertContacts(deps, tenant, { rows });
  assert.equal([second.created, second.updated, second.failed], [0, 500, 0]);
  const stored = await ctx.db.sequelize.query<{ n: number; last: string }>(
    `SELECT count(*)::int AS n, min(last_name) AS last FROM contacts c JOIN contact_tag_links l ON l.contact_id = c.id
      JOIN contact_tags t ON t.id = l.tag_id AND t.name = 'b' WHERE c.tenant_id = :t AND c.first_name = 'C1'`,
    { replacements: { t: w.tenantId }, type: QueryTypes.SELECT },
  );
  assert.equal(stored, [{ n: 1, last: 'L0' }]);

  assert.equal(await planCounts('contacts-bulk-find'), [{ generic: 0, custom: 2 }]);
  assert.equal(await planCounts('contacts-bulk-write'), [{ generic: 0, custom: 2 }]);
  const [setting] = await onTheConnection<{ mode: string }>(`SELECT current_setting('plan_cache_mode') AS mode`);
  assert.equal(setting.mode, 'force_generic_plan');
});

test('a statement planned at each run inside a transaction plans per run for itself only', async () => {
  if (ctx.db.embedded) return;
  const perRun = declare('test.bulk-plans.per-run', 'SELECT count(*)::int AS n FROM contacts WHERE tenant_id = $1', {
    planEachRun: true,
  });
  const once = declare('test.bulk-plans.once', 'SELECT count(*)::int AS n FROM contacts WHERE email = $1');
  const modes = await sql.transaction(async (client) => {
    await sql.rows(perRun, ['00000000-0000-4000-8000-000000000001'], client);
    await sql.rows(once, ['x@example.com'], client);
    return (
      await client.query<{ mode: string; plans: string }>(
        `SELECT current_setting('plan_cache_mode') AS mode,
                (SELECT string_agg(name || ':' || generic_plans || '/' || custom_plans, ' ' ORDER BY name)
                   FROM pg_prepared_statements WHERE name LIKE 'test.bulk-plans.%') AS plans`,
      )
    ).rows[0];
  });
  assert.equal(modes, { mode: 'force_generic_plan', plans: 'test.bulk-plans.once:1/0 test.bulk-plans.per-run:0/1' });
});

test.run();
