// The queue tables are vacuumed as they churn (queue/vacuum.ts, the maintenance thread every 5 s):
// a table with at least VACUUM_DEAD_ROWS dead rows is vacuumed — its dead rows are gone and
// PostgreSQL's count of vacuums went up — and one with fewer is left alone. Real PostgreSQL (the
// embedded PGlite keeps no such statistics).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestDatabase, type TestDatabase } from './helpers/context.ts';
import { migrateUp } from '../daemon/db/migrate.ts';
import { openDatabase, type Database } from '../daemon/db/index.ts';
import { createSql, type Sql } from '../daemon/db/sql.ts';
import { vacuumChurnedQueueTables, VACUUM_DEAD_ROWS } from '../daemon/queue/vacuum.ts';
import { waitFor } from './helpers/wait.ts';

let database: TestDatabase;
let db: Database;
let sql: Sql;

const enabled = Boolean(process.env.DATABASE_URL);

test.before(async () => {
  if (!enabled) return;
  database = await createTestDatabase({ migrated: true });
  db = await openDatabase({ databaseUrl: database.url!, dataDir: database.dataDir });
  await migrateUp(db.sequelize);
  sql = createSql(database.url!, { max: 2, embedded: false });
});

test.after(async () => {
  if (!enabled) return;
  await sql.close();
  await db.close();
  await database.drop();
});

async function tableStats(table: string): Promise<{ dead: number; vacuums: number }> {
  const { rows } = await sql.pool.query<{ dead: number; vacuums: number }>(
    `SELECT n_dead_tup::int AS dead, vacuum_count::int AS vacuums FROM pg_stat_user_tables WHERE relname = $1`,
    [table],
  );
  return rows[0];
}

/** Jobs inserted and deleted again, as a drained queue leaves them: `count` dead rows. */
async function churnJobs(count: number): Promise<void> {
  await sql.pool.query(`INSERT INTO jobs (queue, payload) SELECT 'send', '{}' FROM generate_series(1, $1)`, [count]);
  await sql.pool.query(`DELETE FROM jobs`);
}

test('a queue table with enough dead rows is vacuumed; one with few is not', async () => {
  if (!enabled) return;
  const before = await tableStats('jobs');
  await churnJobs(VACUUM_DEAD_ROWS + 500);
  // The statistics reach the shared counters when the writing connection goes idle (within a second or so).
  await waitFor('the dead rows to be counted', async () => (await tableStats('jobs')).dead >= VACUUM_DEAD_ROWS, {
    timeoutMs: 15_000,
  });
  assert.equal(await vacuumChurnedQueueTables(sql), ['jobs']);
  const after = await tableStats('jobs');
  assert.is(after.vacuums, before.vacuums + 1, 'VACUUM ran once on jobs');
  assert.ok(after.dead < VACUUM_DEAD_ROWS, `dead rows left: ${after.dead}`);
  // The spool and the webhook deliveries had nothing to remove: left alone.
  assert.is((await tableStats('mta_spool')).vacuums, 0);
  assert.is((await tableStats('webhook_deliveries')).vacuums, 0);

  await churnJobs(10);
  await waitFor('the new dead rows to be counted', async () => (await tableStats('jobs')).dead >= 10, {
    timeoutMs: 15_000,
  });
  assert.equal(await vacuumChurnedQueueTables(sql), [], 'below the threshold');
  assert.is((await tableStats('jobs')).vacuums, after.vacuums);
  // The threshold is the caller's to set.
  assert.equal(await vacuumChurnedQueueTables(sql, { minDead: 5 }), ['jobs']);
});

test.run();
