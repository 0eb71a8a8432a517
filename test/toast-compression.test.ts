// Large values are compressed with lz4 where PostgreSQL has it (migration 0410,
// daemon/db/toast-compression.ts): a body written through the API is stored lz4, every partition and
// the partitions made later (both of ensurePartitions' paths) carry it, and down puts pglz back.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { createMigrator } from '../daemon/db/migrate.ts';
import { ensurePartitions, partitionName, addMonths, monthOf } from '../daemon/db/partitions.ts';
import { INBOUND_LARGE_VALUE_COLUMNS, LARGE_VALUE_COLUMNS, lz4Available } from '../daemon/db/toast-compression.ts';

const MIGRATION = '0410-lz4-large-values';
let ctx: TestContext;

test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  await ctx?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** Each relation (table and partition) holding a large-value column, with that column's method. */
async function methods(columns = LARGE_VALUE_COLUMNS): Promise<Map<string, string>> {
  const rows = await q<{ relation: string; method: string }>(
    `SELECT c.relname || '.' || a.attname AS relation,
            CASE a.attcompression WHEN 'l' THEN 'lz4' WHEN 'p' THEN 'pglz' ELSE 'default' END AS method
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
      WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'p')
        AND (c.relname IN (:tables) OR c.relname ~ ('^(' || :pattern || ')_(p\\d{4}_\\d{2}|default)$'))`,
    { tables: Object.keys(columns), pattern: Object.keys(columns).join('|') },
  );
  const wanted = new Map<string, string>();
  for (const { relation, method } of rows) {
    const [table, column] = relation.split('.');
    const parent = table.replace(/_(p\d{4}_\d{2}|default)$/, '');
    if (columns[parent]?.includes(column)) wanted.set(relation, method);
  }
  return wanted;
}

test('a body written through the API is stored with lz4; every table and partition is set', async () => {
  if (!(await lz4Available(ctx.db.sequelize))) {
    // PGlite has no lz4: the migration changes nothing and everything stays as PostgreSQL's default.
    assert.ok([...(await methods()).values()].every((method) => method === 'default'));
    return;
  }
  const set = await methods();
  assert.ok(set.size >= 20, `columns found: ${set.size}`);
  for (const [relation, method] of set) assert.is(method, 'lz4', relation);
  const world = await createWorld(ctx.app);
  const paragraph = Array.from({ length: 2_000 }, (_, i) => `<p>line ${i} of a long message</p>`).join('\n');
  const sent = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: { from: 'Acme <news@acme.test>', to: 'big@example.test', subject: 'Big', htmlBody: paragraph },
  });
  assert.is(sent.statusCode, 202, sent.body);
  const [stored] = await q<{ method: string; size: number; length: number }>(
    `SELECT pg_column_compression(html_body) AS method, pg_column_size(html_body) AS size, length(html_body) AS length
       FROM email_logs WHERE id = :id`,
    { id: sent.json().id },
  );
  assert.is(stored.method, 'lz4');
  assert.is(stored.length, paragraph.length);
  assert.ok(stored.size < stored.length / 3, `stored ${stored.size} bytes of ${stored.length}`);
});

test('inbound webhook bodies and parsed messages (migration 0476): lz4 on every table and partition', async () => {
  const set = await methods(INBOUND_LARGE_VALUE_COLUMNS);
  assert.ok(set.size >= 4, `columns found: ${set.size}`);
  const wanted = (await lz4Available(ctx.db.sequelize)) ? 'lz4' : 'default';
  for (const [relation, method] of set) assert.is(method, wanted, relation);
});

test('partitions made later inherit lz4, also when rows of their month sat in the default partition', async () => {
  if (!(await lz4Available(ctx.db.sequelize))) return;
  const far = addMonths(monthOf(new Date()), 7);
  const farDate = new Date(Date.UTC(far.year, far.month - 1, 15));
  // A row of that month in the default partition: ensurePartitions creates the partition LIKE the table.
  const [stray] = await q<{ id: string }>(
    `INSERT INTO email_events (tenant_id, email_id, type, data, created_at)
     SELECT id, gen_random_uuid(), 'sent', '{}', :at FROM tenants LIMIT 1 RETURNING id`,
    { at: farDate },
  );
  assert.ok(stray);
  await ensurePartitions(ctx.db.sequelize, 'email_events', farDate);
  await ensurePartitions(ctx.db.sequelize, 'email_logs', farDate);
  const set = await methods();
  assert.is(set.get(`${partitionName('email_events', far)}.data`), 'lz4', 'created LIKE the table (stray rows)');
  assert.is(set.get(`${partitionName('email_logs', far)}.html_body`), 'lz4', 'created as a partition');
});

test('down puts pglz back, up lz4 again', async () => {
  if (!(await lz4Available(ctx.db.sequelize))) return;
  const migrator = await createMigrator(ctx.db.sequelize);
  await migrator.down({ to: MIGRATION });
  for (const [relation, method] of await methods()) assert.is(method, 'pglz', relation);
  await migrator.up();
  for (const [relation, method] of await methods()) assert.is(method, 'lz4', relation);
});

test.run();
