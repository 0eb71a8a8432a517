// The plans of GET /emails/logs searches (issue 27): each search's statement reads through the index
// its form names, on a partition without statistics (as a new month's is) and after ANALYZE, never
// a scan or bitmap of the tenant's rows; and every path (key first, the tag's entries, the walk when
// a key is dense) answers exactly what the plain query answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant } from './helpers/fixtures.ts';
import {
  findLogPage,
  keyFirstPageSql,
  KEY_FIRST_CAP,
  NEWEST_FIRST,
  tagWalkPageSql,
  walkPageSql,
  type LogFilter,
} from '../daemon/modules/emails/sql/log-search.ts';
import { logTagRowsSql } from '../daemon/modules/emails/sql/insert-logs.ts';
import { LOG_CHANGES_AFTER_SQL, LOG_CHANGES_LATE_SQL } from '../daemon/modules/emails/sql/log-stream.ts';

let ctx: TestContext;
let tenantId: string;
const LOGS = 30_000;
/** A recipient and a tag on more rows than KEY_FIRST_CAP: their searches walk. */
const DENSE = KEY_FIRST_CAP + 1_000;

test.before(async () => {
  ctx = await createTestContext();
  const owner = await createAdmin(ctx.app);
  tenantId = await createTenant(owner.id);
  const other = await createTenant(owner.id);
  // Rows as the accept path writes them (one tenant, created now, one second apart), and the same
  // recipients and tags in another tenant, whose rows no search of the first may read.
  for (const [tenant, count] of [
    [tenantId, LOGS],
    [other, 5_000],
  ] as const) {
    await ctx.db.sequelize.query(
      `INSERT INTO email_logs (tenant_id, status, message_id, from_address, to_addresses, subject, html_body, text_body, tags, created_at, updated_at)
       SELECT :tenant, CASE WHEN g % 50 = 0 THEN 'FAILED' ELSE 'SENT' END, '<m' || g || '-' || :tenant || '@acme.test>', 'app@acme.test',
              ARRAY[CASE WHEN g <= :dense THEN 'Many <MANY@example.org>' ELSE 'user' || g || '@example.org' END],
              'seed ' || g, '<p>hi</p>', 'hi',
              CASE WHEN g <= :dense THEN ARRAY['dense'] WHEN g % 100 = 0 THEN ARRAY['common'] WHEN g = 20007 THEN ARRAY['rare', 'rare'] ELSE '{}' END,
              now() - make_interval(secs => g), now() - make_interval(secs => g)
         FROM generate_series(1, :count) AS g`,
      { replacements: { tenant, count, dense: DENSE } },
    );
  }
  // Their tags' entries, as the accept path writes them beside its logs.
  await ctx.db.sequelize.query(
    `INSERT INTO email_log_tags (tenant_id, tag, created_at, id) ${logTagRowsSql('email_logs')}`,
  );
});
test.after(async () => {
  await ctx?.close();
});

const page = { limit: 20, offset: 0, after: null };

async function plan(statement: { sql: string; replacements: Record<string, unknown> }, settings: string | null = null) {
  return ctx.db.sequelize.transaction(async (transaction) => {
    if (settings) await ctx.db.sequelize.query(settings, { transaction });
    const rows = await ctx.db.sequelize.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${statement.sql}`, {
      type: QueryTypes.SELECT,
      replacements: statement.replacements,
      transaction,
    });
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

/** The plans of the first two pages' statements: the key's index, no scan of the tenant's rows. */
async function assertPlans(when: string) {
  // Empty partitions (next months, default) may be "scanned": they hold nothing. The ones with rows may not.
  const filled = await ctx.db.sequelize.query<{ name: string }>(
    'SELECT DISTINCT tableoid::regclass::text AS name FROM email_logs',
    { type: QueryTypes.SELECT },
  );
  const seqScanOfRows = new RegExp(`Seq Scan on (${filled.map((p) => p.name).join('|')})\\b`);
  const hour = { since: new Date(Date.now() - 3600_000), until: new Date() };
  const keyed: [string, Partial<LogFilter>, RegExp][] = [
    ['recipient', { to: 'user20500@example.org' }, /Bitmap Index Scan on email_logs_\w+_email_log_recipient_keys_idx/],
    ['message id', { messageId: `<m9-${tenantId}@acme.test>` }, /Index Scan (using|on) email_logs_\w+_message_id_idx/],
  ];
  for (const [name, search, index] of keyed) {
    for (const range of [{}, hour]) {
      const text = await plan(keyFirstPageSql({ tenantId, ...search, ...range }, page)!);
      const label = `${name} ${Object.keys(range).length ? 'in a range' : ''} (${when})\n${text}`;
      assert.match(text, index, label);
      assert.not.match(text, seqScanOfRows, label);
      // The matches are read by the key alone: no bitmap of the tenant's index is ANDed with them.
      assert.not.match(text, /BitmapAnd|Bitmap Index Scan on email_logs_\w+_tenant/, label);
    }
  }
  for (const range of [{}, hour]) {
    // A tag's page walks its entries newest first, the range and cursor bounding the walk, and probes
    // each entry's log by its primary key: no sort, no bitmap, no walk of the tenant's logs.
    for (const tag of ['rare', 'common', 'dense']) {
      for (const after of [null, { at: new Date(Date.now() - 20_000_000).toISOString(), id: tenantId }]) {
        const text = await plan(tagWalkPageSql({ tenantId, tag, ...range }, { ...page, after }), NEWEST_FIRST);
        const label = `tag ${tag} ${JSON.stringify(range)} ${after ? 'after a cursor' : ''} (${when})\n${text}`;
        assert.match(
          text,
          /Index (Only )?Scan Backward using email_log_tags_\w+_pkey on email_log_tags_\w+ \w+[^\n]*\n\s+Index Cond: \(\(tenant_id = '[^']+'::uuid\) AND \(tag = '\w+'::text\)/,
          label,
        );
        if (Object.keys(range).length) assert.match(text, /Index Cond: [^\n]*created_at >= /, label);
        if (after) assert.match(text, /Index Cond: [^\n]*ROW\(created_at, id\) < /, label);
        assert.match(text, /Index Scan using email_logs_\w+_pkey on email_logs_\w+/, label);
        assert.not.match(text, /Bitmap|\n\s*->  Sort  |tenant_id_created_at/, label);
        assert.not.match(text, seqScanOfRows, label);
      }
    }
    const status = await plan(walkPageSql({ tenantId, status: 'FAILED', ...range }, page), NEWEST_FIRST);
    // Either tenant index serves the order (with a range and no statistics the planner may filter the
    // range's rows for the status); neither sorts the rows.
    assert.match(
      status,
      /Index Scan using email_logs_\w+_tenant_id_(status_)?created_at_idx/,
      `status (${when})\n${status}`,
    );
    assert.not.match(status, /\n\s*->  Sort  /, `status (${when})\n${status}`);
    assert.not.match(status, /Bitmap/, `status (${when})\n${status}`);
    for (const text of [status]) assert.not.match(text, seqScanOfRows, `${when}\n${text}`);
    // The bare list's deepest numbered page (page × limit = 10,000) walks the index too: no sort of the tenant's rows.
    const deep = await plan(
      walkPageSql({ tenantId, ...range }, { limit: 100, offset: 9_900, after: null }),
      NEWEST_FIRST,
    );
    assert.match(
      deep,
      /Index Scan (Backward )?using email_logs_\w+_tenant_id_created_at_idx/,
      `deep page (${when})\n${deep}`,
    );
    assert.not.match(deep, /\n\s*->  Sort  |Bitmap/, `deep page (${when})\n${deep}`);
    assert.not.match(deep, seqScanOfRows, `deep page (${when})\n${deep}`);
    const walk = await plan(walkPageSql({ tenantId, tag: 'dense', ...range }, page), NEWEST_FIRST);
    assert.match(walk, /Index Scan using email_logs_\w+_tenant_id_created_at_idx/, `dense walk (${when})\n${walk}`);
    assert.not.match(walk, /Bitmap/, `dense walk (${when})\n${walk}`);
    assert.not.match(walk, seqScanOfRows, `dense walk (${when})\n${walk}`);
  }
  // The live tail's two statements, from a cursor in the middle of the tenant's rows: the cursor bounds
  // the (tenant_id, updated_at, id) index's range; never a filter over the tenant's whole index.
  const [middle] = await ctx.db.sequelize.query<{ at: string; id: string }>(
    `SELECT updated_at::text AS at, id::text AS id FROM email_logs WHERE tenant_id = :tenantId ORDER BY updated_at, id OFFSET :half LIMIT 1`,
    { type: QueryTypes.SELECT, replacements: { tenantId, half: LOGS / 2 } },
  );
  for (const [name, sql] of [
    ['late', LOG_CHANGES_LATE_SQL],
    ['after', LOG_CHANGES_AFTER_SQL],
  ] as const) {
    const tail = await plan({ sql, replacements: { tenantId, ...middle, overlap: 2, limit: 500 } });
    assert.match(
      tail,
      /(Index (Only )?Scan using|Bitmap Index Scan on) email_logs_\w+_tenant_id_updated_at_id_idx[^\n]*\n\s+Index Cond: \(\(tenant_id = '[^']+'::uuid\) AND \(ROW\(updated_at, id\) [<>]/,
      `tail ${name} (${when})\n${tail}`,
    );
    // The plan of the bug: the tenant alone as the index's condition, the cursor as a filter on each entry.
    assert.not.match(tail, /Index Cond: \(tenant_id = '[^']+'::uuid\)\n\s+Filter:/, `tail ${name} (${when})\n${tail}`);
    assert.not.match(tail, seqScanOfRows, `tail ${name} (${when})\n${tail}`);
  }
}

test('each search reads through its index on a partition without statistics', async () => {
  const [stats] = await ctx.db.sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stats WHERE tablename LIKE 'email_logs_p%'`,
    { type: QueryTypes.SELECT },
  );
  assert.is(stats.n, 0, 'no statistics yet');
  await assertPlans('no statistics');
});

test('each search reads through its index after VACUUM without ANALYZE (row counts known, no column statistics)', async () => {
  // What a partition filled through the API looks like before autovacuum analyzes it: the planner
  // knows its size and guesses a tenant's share, and once ANDed that tenant's whole index bitmap with
  // each probe of a page's row (bench:scale at 300,000 logs).
  await ctx.db.sequelize.query('VACUUM email_logs');
  await assertPlans('vacuumed, not analyzed');
});

test('each search reads through its index after ANALYZE', async () => {
  await ctx.db.sequelize.query('ANALYZE email_logs');
  await assertPlans('analyzed');
});

test('every path answers what the plain query answers, pages and cursor included', async () => {
  const expected = async (filter: LogFilter, offset: number) =>
    (
      await ctx.db.sequelize.query<{ id: string }>(
        `SELECT id FROM email_logs WHERE tenant_id = :tenantId
           AND (CAST(:to AS text) IS NULL OR email_bare_addresses(to_addresses) @> email_bare_addresses(ARRAY[CAST(:to AS text)]))
           AND (CAST(:tag AS text) IS NULL OR tags @> ARRAY[CAST(:tag AS text)])
           AND (CAST(:status AS text) IS NULL OR status = :status)
         ORDER BY created_at DESC, id DESC LIMIT 21 OFFSET :offset`,
        {
          type: QueryTypes.SELECT,
          replacements: {
            tenantId,
            to: filter.to ?? null,
            tag: filter.tag ?? null,
            status: filter.status ?? null,
            offset,
          },
        },
      )
    ).map((row) => row.id);
  const searches: Partial<LogFilter>[] = [
    { to: 'user20500@example.org' }, // key first
    { to: 'many@example.org' }, // dense recipient: past the cap, walks
    { to: 'many@example.org', status: 'FAILED' },
    { tag: 'rare' }, // one entry, far back
    { tag: 'common' }, // every hundredth log
    { tag: 'dense' }, // the newest DENSE logs
    { tag: 'common', status: 'FAILED' },
    { tag: 'dense', to: 'many@example.org' }, // the recipient's key first, the tag a filter
  ];
  for (const search of searches) {
    const filter = { tenantId, ...search };
    for (const offset of [0, 40]) {
      const found = await findLogPage(ctx.db.sequelize, filter, { limit: 20, offset, after: null });
      const want = await expected(filter, offset);
      if (offset === 0) assert.ok(want.length > 0, JSON.stringify(search));
      assert.equal(
        found.rows.map((row) => row.id),
        want.slice(0, 20),
        `${JSON.stringify(search)} offset ${offset}`,
      );
      assert.is(found.hasMore, want.length > 20, `${JSON.stringify(search)} offset ${offset}`);
    }
    // The cursor continues where page 1 ended.
    const first = await findLogPage(ctx.db.sequelize, filter, page);
    const last = first.rows.at(-1);
    if (!last) continue;
    const next = await findLogPage(ctx.db.sequelize, filter, { ...page, after: { at: last.position, id: last.id } });
    assert.equal(
      next.rows.map((row) => row.id),
      (await expected(filter, 20)).slice(0, 20),
      `${JSON.stringify(search)} after the cursor`,
    );
  }
  const rare = await findLogPage(ctx.db.sequelize, { tenantId, tag: 'rare' }, page);
  assert.is(rare.rows.length, 1, 'the rare tag is found');
});

interface AnalyzedNode {
  'Node Type': string;
  'Index Name'?: string;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: AnalyzedNode[];
}

function indexScans(node: AnalyzedNode): AnalyzedNode[] {
  const own = node['Node Type'] === 'Bitmap Index Scan' ? [node] : [];
  return [...own, ...(node.Plans ?? []).flatMap(indexScans)];
}

test('the GIN search indexes keep no pending list: a recipient search reads a few index pages, not every recent key', async () => {
  const sequelize = ctx.db.sequelize;
  const settings = await sequelize.query<{ name: string; options: string[] | null }>(
    `SELECT ic.relname AS name, ic.reloptions AS options FROM pg_index x
       JOIN pg_class ic ON ic.oid = x.indexrelid JOIN pg_am am ON am.oid = ic.relam AND am.amname = 'gin'
       JOIN pg_inherits i ON i.inhrelid = x.indrelid WHERE i.inhparent = CAST('email_logs' AS regclass)`,
    { type: QueryTypes.SELECT },
  );
  assert.ok(settings.length >= 2, 'each partition has the recipient index');
  for (const index of settings) assert.equal(index.options, ['fastupdate=off'], index.name);

  // A partition made later (maintenance, a month ahead) gets the same setting.
  const { ensurePartitions } = await import('../daemon/db/partitions.ts');
  const later = new Date(Date.UTC(new Date().getUTCFullYear() + 1, 5, 15));
  const created = await ensurePartitions(sequelize, 'email_logs', later);
  assert.ok(created.length > 0);
  const [fresh] = await sequelize.query<{ options: string[] | null }>(
    `SELECT ic.reloptions AS options FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid
      WHERE x.indrelid = CAST(:table AS regclass) AND ic.relname LIKE '%recipient_keys%'`,
    { type: QueryTypes.SELECT, replacements: { table: created[0] } },
  );
  assert.equal(fresh.options, ['fastupdate=off'], `the index of ${created[0]}`);

  // The 35,000 rows inserted above would sit in a pending list of ~200 pages, read by every search.
  const statement = keyFirstPageSql({ tenantId, to: 'user20000@example.org' }, page)!;
  const [explained] = await sequelize.query<{ 'QUERY PLAN': [{ Plan: AnalyzedNode }] }>(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${statement.sql}`,
    { type: QueryTypes.SELECT, replacements: statement.replacements },
  );
  const scans = indexScans(explained['QUERY PLAN'][0].Plan);
  assert.ok(scans.length > 0, 'the search reads the recipient index');
  const pages = scans.reduce((sum, scan) => sum + scan['Shared Hit Blocks'] + scan['Shared Read Blocks'], 0);
  assert.ok(pages <= 12 * scans.length, `index pages read: ${pages} over ${scans.length} partitions`);
});

test.run();
