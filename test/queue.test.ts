// The queue primitives over a real database, then real worker threads: 1,000 jobs across two
// threads each processed once, and a thread that dies mid-job whose jobs are reclaimed and finished.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync } from 'node:fs';
import pg from 'pg';
import pino from 'pino';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createRunTable, count, enqueueRange, TEST_WORKER_MODULE } from './helpers/queue-test.ts';
import { nothingWithin, waitFor } from './helpers/wait.ts';
import {
  claimJobs,
  completeJob,
  enqueueJob,
  extendLease,
  failJob,
  queueChannel,
  queueStats,
  reclaimExpiredLeases,
  releaseJobs,
  removeJob,
  retryJob,
} from '../daemon/queue/index.ts';
import { startWorkers, type WorkerPool } from '../daemon/jobs/index.ts';
import type { QueueName } from '../shared/constants.ts';

let ctx: TestContext;
const q = (name: string) => name as QueueName;
const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

test.before(async () => {
  ctx = await createTestContext();
  await createRunTable(ctx.db.sequelize);
});
test.after(async () => {
  await ctx?.close();
});

const rowsOf = (queue: string) =>
  ctx.db.sequelize.query<{
    id: string;
    attempts: number;
    locked_by: string | null;
    run_at: Date;
    last_error: string | null;
  }>(`SELECT id::text AS id, attempts, locked_by, run_at, last_error FROM jobs WHERE queue = :queue ORDER BY id`, {
    replacements: { queue },
    type: 'SELECT' as never,
  }) as unknown as Promise<
    Array<{ id: string; attempts: number; locked_by: string | null; run_at: Date; last_error: string | null }>
  >;

test('enqueueJob stores the job; a repeated key keeps the waiting job; removeJob cancels it', async () => {
  const sequelize = ctx.db.sequelize;
  const id = await enqueueJob(sequelize, {
    queue: q('t-basic'),
    payload: { a: 1 },
    key: 'sched-1',
    runAt: new Date(Date.now() + 60_000),
  });
  assert.match(id, /^\d+$/);
  const again = await enqueueJob(sequelize, { queue: q('t-basic'), payload: { a: 2 }, key: 'sched-1' });
  assert.is(again, id);
  assert.is((await rowsOf('t-basic')).length, 1);
  const stats = await queueStats(sequelize, 1000);
  assert.equal(stats['t-basic'], {
    depth: 0,
    oldestWaitingAgeMs: 0,
    running: 0,
    scheduled: 1,
    failed: 0,
    stuck: false,
  });
  assert.ok(await removeJob(sequelize, q('t-basic'), 'sched-1'));
  assert.not.ok(await removeJob(sequelize, q('t-basic'), 'sched-1'));
  assert.is((await rowsOf('t-basic')).length, 0);
});

test('enqueueJob inside a rolled-back transaction leaves nothing behind', async () => {
  const sequelize = ctx.db.sequelize;
  const tx = await sequelize.transaction();
  await enqueueJob(sequelize, { queue: q('t-tx'), payload: {} }, tx);
  await tx.rollback();
  assert.is((await rowsOf('t-tx')).length, 0);
});

test('claimJobs: due jobs only, oldest first, never the same job to two workers', async () => {
  const sequelize = ctx.db.sequelize;
  await enqueueJob(sequelize, { queue: q('t-claim'), payload: { n: 'later' }, runAt: new Date(Date.now() + 60_000) });
  for (let n = 0; n < 6; n++)
    await enqueueJob(sequelize, { queue: q('t-claim'), payload: { n }, runAt: new Date(Date.now() - 10_000 + n) });
  const [a, b] = await Promise.all([
    claimJobs(sequelize, q('t-claim'), 'worker-a', 4, 30_000),
    claimJobs(sequelize, q('t-claim'), 'worker-b', 4, 30_000),
  ]);
  const ids = [...a, ...b].map((job) => job.id);
  assert.is(ids.length, 6, 'the future job is not claimed');
  assert.is(new Set(ids).size, 6, 'no job handed out twice');
  const first = a.length === 4 ? a : b;
  assert.equal(
    first.map((job) => job.payload.n),
    [0, 1, 2, 3],
  );
  assert.is(first[0].attempts, 0);
  const stats = (await queueStats(sequelize, 1000))['t-claim'];
  assert.is(stats.running, 6);
  assert.is(stats.scheduled, 1);
  assert.is((await claimJobs(sequelize, q('t-claim'), 'worker-c', 10, 30_000)).length, 0);
  for (const job of a) assert.ok(await completeJob(sequelize, job.id, 'worker-a'));
  assert.not.ok(
    await completeJob(sequelize, b[0].id, 'worker-a'),
    'another worker cannot complete a job it does not hold',
  );
  assert.is(await releaseJobs(sequelize, 'worker-b'), b.length);
  const left = await rowsOf('t-claim');
  assert.is(left.length, 1 + b.length);
  assert.ok(
    left.every((row) => row.locked_by === null && row.attempts === 0),
    'a clean release counts no attempt',
  );
});

test('retryJob backs off and counts attempts; the last attempt moves the job to failed_jobs', async () => {
  const sequelize = ctx.db.sequelize;
  await enqueueJob(sequelize, { queue: q('t-retry'), payload: { x: 1 }, maxAttempts: 2 });
  const [job] = await claimJobs(sequelize, q('t-retry'), 'w', 1, 30_000);
  assert.is(await retryJob(sequelize, job.id, 'w', 50_000, 'relay said 451'), 'retried');
  let [row] = await rowsOf('t-retry');
  assert.is(row.attempts, 1);
  assert.is(row.locked_by, null);
  assert.is(row.last_error, 'relay said 451');
  assert.ok(new Date(row.run_at).getTime() > Date.now() + 40_000, 'the next attempt waits for the backoff');
  assert.is((await claimJobs(sequelize, q('t-retry'), 'w', 1, 30_000)).length, 0, 'not due yet');
  await sequelize.query(`UPDATE jobs SET run_at = now() WHERE id = ${Number(job.id)}`);
  const [again] = await claimJobs(sequelize, q('t-retry'), 'w', 1, 30_000);
  assert.is(again.attempts, 1);
  assert.is(await retryJob(sequelize, again.id, 'w', 10, 'relay said 451 again'), 'failed');
  assert.is((await rowsOf('t-retry')).length, 0);
  const failed = await sequelize.query<{ attempts: number; last_error: string; payload: { x: number } }>(
    `SELECT attempts, last_error, payload FROM failed_jobs WHERE id = :id`,
    { replacements: { id: job.id }, type: 'SELECT' as never },
  );
  assert.equal(failed, [{ attempts: 2, last_error: 'relay said 451 again', payload: { x: 1 } }]);
  [row] = await rowsOf('t-retry');
  assert.is(row, undefined);
  assert.is(await retryJob(sequelize, job.id, 'w', 10, 'gone'), 'lease-lost');
});

test('failJob gives up at once and keeps the error', async () => {
  const sequelize = ctx.db.sequelize;
  await enqueueJob(sequelize, { queue: q('t-fail'), payload: {} });
  const [job] = await claimJobs(sequelize, q('t-fail'), 'w', 1, 30_000);
  assert.not.ok(await failJob(sequelize, job.id, 'someone-else', 'nope'));
  assert.ok(await failJob(sequelize, job.id, 'w', '550 mailbox unavailable'));
  assert.is((await rowsOf('t-fail')).length, 0);
  assert.is((await queueStats(sequelize, 1000))['t-fail'].failed, 1);
});

test('an expired lease is reclaimed with the attempt counted; a live one is extended and kept', async () => {
  const sequelize = ctx.db.sequelize;
  await enqueueJob(sequelize, { queue: q('t-lease'), payload: { n: 1 } });
  await enqueueJob(sequelize, { queue: q('t-lease'), payload: { n: 2 } });
  await enqueueJob(sequelize, { queue: q('t-lease'), payload: { n: 3 }, maxAttempts: 1 });
  const jobs = await claimJobs(sequelize, q('t-lease'), 'dead-worker', 3, 200);
  const [kept] = await claimJobs(sequelize, q('t-lease'), 'x', 1, 1);
  assert.is(kept, undefined);
  assert.equal(await extendLease(sequelize, [jobs[1].id], 'dead-worker', 60_000), [jobs[1].id]);
  assert.equal(await extendLease(sequelize, [jobs[1].id], 'other', 60_000), []);
  const unextended = [jobs[0].id, jobs[2].id];
  await waitFor(
    'the 200 ms leases to expire',
    async () =>
      (await count(sequelize, `SELECT count(*) FROM jobs WHERE id IN (:ids) AND locked_until < now()`, {
        ids: unextended,
      })) === 2,
    { intervalMs: 20 },
  );
  const result = await reclaimExpiredLeases(sequelize);
  assert.equal(result, { reclaimed: 1, failed: 1 });
  const rows = await rowsOf('t-lease');
  assert.is(rows.length, 2);
  const reclaimed = rows.find((row) => row.id === jobs[0].id)!;
  assert.is(reclaimed.attempts, 1);
  assert.is(reclaimed.locked_by, null);
  assert.match(reclaimed.last_error!, /lease of worker dead-worker expired/);
  assert.is(rows.find((row) => row.id === jobs[1].id)!.locked_by, 'dead-worker', 'the extended lease still holds');
});

test('queueStats reports depth, the oldest waiting age and stuck', async () => {
  const sequelize = ctx.db.sequelize;
  await enqueueJob(sequelize, { queue: q('t-stats'), payload: {}, runAt: new Date(Date.now() - 5_000) });
  await enqueueJob(sequelize, { queue: q('t-stats'), payload: {} });
  const stats = (await queueStats(sequelize, 2_000))['t-stats'];
  assert.is(stats.depth, 2);
  assert.ok(stats.oldestWaitingAgeMs >= 4_500 && stats.oldestWaitingAgeMs < 60_000, String(stats.oldestWaitingAgeMs));
  assert.ok(stats.stuck);
  assert.not.ok((await queueStats(sequelize, 60_000))['t-stats'].stuck);
  const all = await queueStats(sequelize, 60_000);
  for (const queue of ['send', 'scheduled', 'webhook', 'maintenance', 'system', 'campaign'])
    assert.ok(all[queue], `${queue} is always listed`);
});

test('NOTIFY: one per queue per transaction, however many jobs it enqueues', async () => {
  if (ctx.db.embedded) return; // the embedded PGlite does not deliver NOTIFY across connections
  const listener = new pg.Client({ connectionString: ctx.databaseUrl });
  await listener.connect();
  const heard: string[] = [];
  listener.on('notification', (message) => heard.push(`${message.channel}:${message.payload}`));
  await listener.query(`LISTEN ${queueChannel(q('t-notify'))}`);
  const sequelize = ctx.db.sequelize;
  await sequelize.transaction(async (tx) => {
    for (let i = 0; i < 5; i++) await enqueueJob(sequelize, { queue: q('t-notify'), payload: { i } }, tx);
  });
  await enqueueJob(sequelize, { queue: q('t-notify'), payload: { later: true }, runAt: new Date(Date.now() + 60_000) });
  // Notifications arrive in commit order: once this marker is heard, every earlier one has been.
  await sequelize.query(`SELECT pg_notify(:channel, 'marker')`, {
    replacements: { channel: queueChannel(q('t-notify')) },
  });
  await waitFor('the marker notification', () => heard.length > 0 && heard.at(-1)!.endsWith(':marker'), {
    intervalMs: 10,
  });
  await listener.end();
  assert.equal(heard, [`${queueChannel(q('t-notify'))}:t-notify`, `${queueChannel(q('t-notify'))}:marker`]);
});

async function startPool(names: string[], queue: string, tuning = {}): Promise<WorkerPool> {
  return startWorkers({
    config: ctx.config,
    databaseUrl: ctx.databaseUrl,
    secrets: ctx.deps.secrets,
    log,
    workers: names.map((name) => ({ name, module: TEST_WORKER_MODULE, options: { queue } })),
    tuning: { leaseMs: 3_000, reclaimEveryMs: 250, embeddedPollMs: 100, pollMs: 1_000, ...tuning },
  });
}

test('1,000 jobs across two worker threads: each processed exactly once', async () => {
  const sequelize = ctx.db.sequelize;
  const pool = await startPool(['counter-1', 'counter-2'], 't-thousand');
  try {
    assert.ok(pool.alive());
    await enqueueRange(sequelize, 't-thousand', 0, 1000);
    await waitFor(
      '1,000 runs',
      async () => (await count(sequelize, `SELECT count(*) FROM queue_test_runs WHERE n < 1000`)) >= 1000,
      { timeoutMs: 120_000 },
    );
    await waitFor(
      'an empty queue',
      async () => (await count(sequelize, `SELECT count(*) FROM jobs WHERE queue = 't-thousand'`)) === 0,
      { timeoutMs: 10_000 },
    );
  } finally {
    await pool.stop();
  }
  assert.is(await count(sequelize, `SELECT count(*) FROM queue_test_runs WHERE n < 1000`), 1000);
  assert.is(
    await count(sequelize, `SELECT count(DISTINCT n) FROM queue_test_runs WHERE n < 1000`),
    1000,
    'no job ran twice',
  );
  const perWorker = await sequelize.query<{ worker: string; count: number }>(
    `SELECT worker, count(*) AS count FROM queue_test_runs WHERE n < 1000 GROUP BY worker`,
    { type: 'SELECT' as never },
  );
  assert.is(perWorker.length, 2, `both threads took work: ${JSON.stringify(perWorker)}`);
  assert.is(await count(sequelize, `SELECT count(*) FROM failed_jobs WHERE queue = 't-thousand'`), 0);
});

test('a thread that dies mid-job: its jobs are reclaimed after the lease and finished; the pool restarts it', async () => {
  const sequelize = ctx.db.sequelize;
  const maintenance = {
    name: 'maintenance',
    module: new URL('../daemon/jobs/maintenance.ts', import.meta.url).pathname,
  };
  const pool = await startWorkers({
    config: ctx.config,
    databaseUrl: ctx.databaseUrl,
    secrets: ctx.deps.secrets,
    log,
    workers: [{ name: 'crasher', module: TEST_WORKER_MODULE, options: { queue: 't-crash' } }, maintenance],
    tuning: { leaseMs: 1_500, reclaimEveryMs: 250, embeddedPollMs: 100, pollMs: 500, concurrency: 5, batchSize: 5 },
  });
  try {
    await enqueueRange(sequelize, 't-crash', 2000, 2005, { crashOnFirstAttempt: true, workMs: 100 });
    await enqueueRange(sequelize, 't-crash', 2005, 2010, { workMs: 20 });
    await waitFor(
      'all 10 jobs finished',
      async () =>
        (await count(sequelize, `SELECT count(DISTINCT n) FROM queue_test_runs WHERE n >= 2000 AND n < 2010`)) === 10,
      { timeoutMs: 60_000 },
    );
    await waitFor(
      'an empty queue',
      async () => (await count(sequelize, `SELECT count(*) FROM jobs WHERE queue = 't-crash'`)) === 0,
      { timeoutMs: 10_000 },
    );
    await waitFor('the restarted thread', async () => pool.alive(), { timeoutMs: 30_000 });
  } finally {
    await pool.stop();
  }
  const crashed = await count(
    sequelize,
    `SELECT count(*) FROM queue_test_runs WHERE n >= 2000 AND n < 2005 AND attempts >= 1`,
  );
  assert.is(crashed, 5, 'the crashing jobs finished on a later attempt, after their lease was reclaimed');
  assert.is(await count(sequelize, `SELECT count(*) FROM failed_jobs WHERE queue = 't-crash'`), 0, 'nothing lost');
});

test('stop() drains in-flight jobs and leaves no lease behind', async () => {
  const sequelize = ctx.db.sequelize;
  const pool = await startPool(['drainer'], 't-drain');
  await enqueueRange(sequelize, 't-drain', 3000, 3005, { workMs: 1_000 });
  await waitFor(
    'jobs running',
    async () =>
      (await count(sequelize, `SELECT count(*) FROM jobs WHERE queue = 't-drain' AND locked_by IS NOT NULL`)) > 0,
    { timeoutMs: 20_000, intervalMs: 50 },
  );
  await pool.stop();
  assert.not.ok(pool.alive());
  assert.is(await count(sequelize, `SELECT count(*) FROM jobs WHERE queue = 't-drain' AND locked_by IS NOT NULL`), 0);
  const done = await count(sequelize, `SELECT count(*) FROM queue_test_runs WHERE n >= 3000 AND n < 3005`);
  const waiting = await count(sequelize, `SELECT count(*) FROM jobs WHERE queue = 't-drain'`);
  assert.is(done + waiting, 5, 'every job either finished or waits, unleased, for the next worker');
  assert.ok(done > 0, 'the running jobs were allowed to finish');
});

test('threads started before their database wait for its URL, then work; one restarted later is given it at start', async () => {
  const sequelize = ctx.db.sequelize;
  let giveUrl!: (url: string) => void;
  const databaseUrl = new Promise<string>((resolve) => (giveUrl = resolve));
  const maintenance = {
    name: 'maintenance',
    module: new URL('../daemon/jobs/maintenance.ts', import.meta.url).pathname,
  };
  const starting = startWorkers({
    config: ctx.config,
    databaseUrl,
    secrets: ctx.deps.secrets,
    log,
    workers: [{ name: 'early-crasher', module: TEST_WORKER_MODULE, options: { queue: 't-early' } }, maintenance],
    tuning: { leaseMs: 1_500, reclaimEveryMs: 250, embeddedPollMs: 100, pollMs: 500, concurrency: 5, batchSize: 5 },
  });
  await enqueueRange(sequelize, 't-early', 4000, 4003, { crashOnFirstAttempt: true, workMs: 50 });
  // Nothing may happen here: 1.5 s is time for the threads to load and, had they a URL, to claim (they poll
  // every 100 ms); no state of theirs says "waiting for the URL" to wait on instead.
  await nothingWithin(1_500);
  assert.is(
    await count(sequelize, `SELECT count(*) FROM jobs WHERE queue = 't-early' AND locked_by IS NOT NULL`),
    0,
    'no thread touched the database before its URL was given',
  );
  giveUrl(ctx.databaseUrl);
  const pool = await starting;
  try {
    await waitFor(
      'the three jobs finished',
      async () =>
        (await count(sequelize, `SELECT count(DISTINCT n) FROM queue_test_runs WHERE n >= 4000 AND n < 4003`)) === 3,
      { timeoutMs: 60_000 },
    );
    // The crash killed the thread once: it came back with the URL in its start data.
    await waitFor('the restarted thread', async () => pool.alive(), { timeoutMs: 30_000 });
  } finally {
    await pool.stop();
  }
});

test('a boot that fails before the database is ready: startWorkers rejects and its threads end', async () => {
  const threads = () => readdirSync('/proc/self/task').length;
  const before = threads();
  const failed = startWorkers({
    config: ctx.config,
    databaseUrl: new Promise<string>((_, reject) =>
      setTimeout(() => reject(new Error('the database did not open')), 500),
    ),
    secrets: ctx.deps.secrets,
    log,
    workers: [{ name: 'never-connected', module: TEST_WORKER_MODULE, options: { queue: 't-never' } }],
  });
  const error = await failed.then(
    () => null,
    (reason: unknown) => reason,
  );
  assert.match(String(error), /the database did not open/);
  await waitFor('the thread gone', async () => threads() <= before, { timeoutMs: 10_000 });
});

test.run();
