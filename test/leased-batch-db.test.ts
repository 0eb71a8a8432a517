// The leased-batch engine on a real database: two engines (two workers) claim from one table with
// SKIP LOCKED under a lease, run each row in its lane and group-commit the outcomes. Every row is
// done exactly once, both workers take part, and each commit statement carries several rows.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import pino from 'pino';
import { createTestContext, createTestDatabase, type TestContext, type TestDatabase } from './helpers/context.ts';
import { createLeasedBatchEngine, FixedLane } from '../daemon/queue/leased-batch.ts';
import { runLeasedBatchLoop } from '../daemon/queue/leased-batch-loop.ts';
import { createWaker } from '../daemon/queue/wake.ts';
import { waitFor } from './helpers/wait.ts';

const ROWS = 400;
let database: TestDatabase;
/** Only without DATABASE_URL: the embedded database, served by a daemon context. */
let ctx: TestContext | undefined;
let pool: pg.Pool;

interface Row {
  id: number;
  lane: string;
}

test.before(async () => {
  // An empty PostgreSQL database is enough; the embedded one needs the daemon's socket server.
  database = await createTestDatabase();
  if (!database.url) ctx = await createTestContext({ database });
  pool = new pg.Pool({ connectionString: database.url ?? ctx!.databaseUrl, max: 6 });
  // An idle client ended by the server (the database dropped at teardown) is dropped from the pool, not a crash.
  pool.on('error', () => {});
  await pool.query(`CREATE TABLE engine_items (
    id int PRIMARY KEY, lane text NOT NULL, locked_by text, locked_until timestamptz,
    done_by text, done_count int NOT NULL DEFAULT 0)`);
  await pool.query(
    `INSERT INTO engine_items (id, lane) SELECT i, 'lane-' || (i % 5) FROM generate_series(1, $1) AS i`,
    [ROWS],
  );
});
test.after(async () => {
  await pool?.end();
  await ctx?.close();
  await database?.drop();
});

function worker(workerId: string, stats: { commits: number; maxLane: number }) {
  const running = new Map<string, number>();
  return createLeasedBatchEngine<Row, string, FixedLane<Row>>({
    log: pino({ level: 'silent' }),
    noun: 'engine items',
    leaseMs: 30_000,
    claimBatch: 20,
    maxActive: 20,
    maxHeld: 60,
    maxAnswered: Infinity,
    extendsAnswered: true,
    claimAt: 5,
    commitBatchMax: 200,
    commitLingerMs: 5,
    commitLingerBelow: 20,
    commitRetryMs: 50,
    idleLaneMs: 60_000,
    idOf: (row) => String(row.id),
    laneOf: (row) => row.lane,
    newLane: (key) => new FixedLane<Row>(key, 3, 3),
    newLaneRoom: 6,
    claim: async (want, lanes) =>
      (
        await pool.query<Row>(
          `UPDATE engine_items SET locked_by = $1, locked_until = now() + interval '30 seconds'
            WHERE id IN (SELECT id FROM engine_items
                          WHERE done_count = 0 AND (locked_until IS NULL OR locked_until < now())
                            AND lane <> ALL ($3::text[])
                          ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
            RETURNING id, lane`,
          [workerId, want, lanes.full],
        )
      ).rows,
    extend: async (rows) =>
      (
        await pool.query(
          `UPDATE engine_items SET locked_until = now() + interval '30 seconds' WHERE id = ANY ($1) AND locked_by = $2`,
          [rows.map((row) => row.id), workerId],
        )
      ).rowCount ?? 0,
    run: async (row) => {
      const now = (running.get(row.lane) ?? 0) + 1;
      running.set(row.lane, now);
      stats.maxLane = Math.max(stats.maxLane, now);
      await new Promise((resolve) => setTimeout(resolve, 2));
      running.set(row.lane, running.get(row.lane)! - 1);
      return workerId;
    },
    commit: async (batch) => {
      stats.commits += 1;
      await pool.query(
        `UPDATE engine_items SET done_count = done_count + 1, done_by = $2, locked_by = NULL, locked_until = NULL
          WHERE id = ANY ($1) AND locked_by = $2`,
        [batch.map(({ item }) => item.id), batch[0].outcome],
      );
    },
  });
}

test('two workers drain one table: every row done once, by both, in grouped commits', async () => {
  const stop = new AbortController();
  const stats = { a: { commits: 0, maxLane: 0 }, b: { commits: 0, maxLane: 0 } };
  const loops = (['a', 'b'] as const).map((id) =>
    runLeasedBatchLoop(worker(`worker-${id}`, stats[id]), {
      signal: stop.signal,
      waker: createWaker(),
      log: pino({ level: 'silent' }),
      noun: 'engine items',
      pollMs: 20,
      claimGapMs: 0,
      claimErrorPauseMs: 50,
      drainTimeoutMs: 2_000,
    }),
  );
  await waitFor(
    'every row done',
    async () =>
      (await pool.query(`SELECT count(*)::int AS n FROM engine_items WHERE done_count > 0`)).rows[0].n === ROWS,
    { timeoutMs: 20_000, intervalMs: 20 },
  );
  stop.abort();
  await Promise.all(loops);
  const { rows } = await pool.query<{ done_count: number; done_by: string; n: number }>(
    `SELECT done_count, done_by, count(*)::int AS n FROM engine_items GROUP BY 1, 2 ORDER BY 2`,
  );
  assert.ok(
    rows.every((row) => row.done_count === 1),
    `each row done once: ${JSON.stringify(rows)}`,
  );
  assert.equal(
    rows.map((row) => row.done_by),
    ['worker-a', 'worker-b'],
    'both workers took part',
  );
  const { rows: leftover } = await pool.query(`SELECT id FROM engine_items WHERE locked_by IS NOT NULL`);
  assert.is(leftover.length, 0, 'no lease left behind');
  assert.ok(stats.a.maxLane <= 3 && stats.b.maxLane <= 3, 'a lane runs at most its limit');
  assert.ok(stats.a.commits + stats.b.commits < ROWS / 3, `grouped: ${stats.a.commits + stats.b.commits} commits`);
});

test.run();
