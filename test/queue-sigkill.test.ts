// A process holding leases is killed with SIGKILL: nothing it held is lost. While it lived its
// leases were kept fresh; once it is gone they expire, are reclaimed, and another worker finishes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { count, createRunTable, enqueueRange, TEST_WORKER_MODULE } from './helpers/queue-test.ts';
import { nothingWithin, waitFor } from './helpers/wait.ts';
import { reclaimExpiredLeases } from '../daemon/queue/index.ts';
import { daemonWorkers, MTA_WORKER, startWorkers, workerTuning } from '../daemon/jobs/index.ts';
import { ConfigError, loadConfig } from '../daemon/config.ts';

let ctx: TestContext;
let child: ChildProcess | null = null;
test.before(async () => {
  ctx = await createTestContext();
  await createRunTable(ctx.db.sequelize);
});
test.after(async () => {
  child?.kill('SIGKILL');
  await ctx?.close();
});

test('jobs leased by a SIGKILLed process are reclaimed after the lease and finished, none lost', async () => {
  const sequelize = ctx.db.sequelize;
  // The child runs 10 at a time: it takes these 10 and never finishes them.
  await enqueueRange(sequelize, 't-kill', 0, 10, { hangOnFirstAttempt: true });

  const script = fileURLToPath(new URL('./helpers/queue-child.ts', import.meta.url));
  child = spawn(
    process.execPath,
    ['--import', 'tsx', script, ctx.databaseUrl, 't-kill', ctx.db.embedded ? 'embedded' : 'external'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const held = `SELECT count(*) FROM jobs WHERE queue = 't-kill' AND locked_by LIKE '%:${child.pid}:holder:%'`;
  await waitFor('the child to lease 10 jobs', async () => (await count(sequelize, held)) === 10, {
    timeoutMs: 60_000,
    intervalMs: 100,
  });
  // Work the child has no room for; it waits for the next worker.
  await enqueueRange(sequelize, 't-kill', 10, 20);

  // Longer than the 1.5 s lease: a live holder extends it, so nothing may be reclaimed yet.
  await nothingWithin(2_500);
  assert.equal(await reclaimExpiredLeases(sequelize), { reclaimed: 0, failed: 0 });
  assert.is(await count(sequelize, held), 10);

  child.kill('SIGKILL');
  await new Promise((resolve) => child!.once('exit', resolve));
  child = null;

  const pool = await startWorkers({
    config: ctx.config,
    databaseUrl: ctx.databaseUrl,
    secrets: ctx.deps.secrets,
    log: pino({ level: 'silent' }),
    workers: [
      { name: 'finisher', module: TEST_WORKER_MODULE, options: { queue: 't-kill' } },
      { name: 'maintenance', module: fileURLToPath(new URL('../daemon/jobs/maintenance.ts', import.meta.url)) },
    ],
    tuning: { leaseMs: 1_500, reclaimEveryMs: 250, embeddedPollMs: 100, pollMs: 500 },
  });
  try {
    await waitFor(
      'all 20 jobs finished',
      async () => (await count(sequelize, `SELECT count(DISTINCT n) FROM queue_test_runs`)) === 20,
      { timeoutMs: 60_000 },
    );
    await waitFor(
      'an empty queue',
      async () => (await count(sequelize, `SELECT count(*) FROM jobs WHERE queue = 't-kill'`)) === 0,
      { timeoutMs: 10_000 },
    );
  } finally {
    await pool.stop();
  }
  assert.is(await count(sequelize, `SELECT count(*) FROM queue_test_runs`), 20, 'each job finished once');
  assert.is(
    await count(sequelize, `SELECT count(*) FROM queue_test_runs WHERE attempts = 1`),
    10,
    'the killed process’s jobs ran again with the attempt counted',
  );
  assert.is(await count(sequelize, `SELECT count(*) FROM failed_jobs`), 0);
});

test('JOB_LEASE_MS sets the lease of every worker thread; unset, each queue keeps its own', () => {
  const leases = (env: Record<string, string>) => {
    const config = loadConfig({ DELIVERY: 'direct', ...env });
    return Object.fromEntries(
      daemonWorkers(config).map((definition) => [definition.name, workerTuning(definition, config).leaseMs]),
    );
  };
  assert.equal(leases({}), { 'send-worker': 60_000, background: 60_000, [MTA_WORKER.name]: 20_000 });
  assert.equal(leases({ JOB_LEASE_MS: '10000' }), {
    'send-worker': 10_000,
    background: 10_000,
    [MTA_WORKER.name]: 10_000,
  });
  const config = loadConfig({ JOB_LEASE_MS: '10000' });
  assert.is(
    workerTuning(daemonWorkers(config)[0], config, { leaseMs: 1_500 }).leaseMs,
    1_500,
    "a caller's tuning wins",
  );
  assert.throws(
    () => loadConfig({ JOB_LEASE_MS: '500' }),
    (error: Error) => error instanceof ConfigError,
  );
});

test.run();
