// The real thing: `svc daemon start` as a child process on a free port, on the embedded PGlite and
// (when DATABASE_URL is set) on PostgreSQL. Ready means database, migrations and worker threads;
// SIGTERM drains and exits 0.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase } from './helpers/context.ts';
import {
  killDaemonProcesses,
  startDaemonProcess,
  SVC_BIN,
  waitForReady,
  type DaemonProcess,
} from './helpers/daemon-process.ts';
import { waitFor } from './helpers/wait.ts';

const SVC = SVC_BIN;
const children = new Set<ChildProcess>();
const startDaemon = startDaemonProcess;

/** /health/ready's answer once it is 200 (within 90 s). */
async function waitReady(daemon: DaemonProcess): Promise<{ status: number; body: Record<string, any> }> {
  await waitForReady(daemon, 90_000);
  const res = await fetch(`${daemon.url}/health/ready`);
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

test.after(() => {
  killDaemonProcesses();
  for (const child of children) child.kill('SIGKILL');
});

async function bootAndStop(env: Record<string, string>) {
  const daemon = await startDaemon(env);
  const ready = await waitReady(daemon);
  assert.is(ready.status, 200, JSON.stringify(ready.body));
  assert.is(ready.body.status, 'ready');
  assert.ok(ready.body.checks.workers.ok);
  assert.equal(
    ready.body.checks.workers.names,
    env.WORKER_THREADS === 'separate'
      ? ['send-worker', 'scheduler', 'webhook-worker', 'system-mail-worker', 'maintenance', 'campaign-worker']
      : ['send-worker', 'background'],
  );
  assert.equal(ready.body.checks.migrations, { ok: true, pending: [] });

  const queues = await fetch(`${daemon.url}/health/queues`);
  assert.is(queues.status, 401, 'the queue report needs a bearer token');

  daemon.child.kill('SIGTERM');
  assert.is(await daemon.exit, 0, daemon.output());
  assert.match(daemon.output(), /shutting down/);
  assert.not.match(daemon.output(), /ERR_UNKNOWN_FILE_EXTENSION|worker thread failed|stopped unexpectedly/);
}

test('boots on the embedded PGlite: ready with its four worker threads, SIGTERM exits 0', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-'));
  try {
    await bootAndStop({ DATA_DIR: dataDir });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('boots on PostgreSQL (DATABASE_URL): ready with workers, SIGTERM exits 0', async () => {
  if (!process.env.DATABASE_URL) return;
  const database = await createTestDatabase();
  try {
    await bootAndStop({
      DATA_DIR: database.dataDir,
      WORKER_THREADS: 'separate',
      DATABASE_URL: database.url!,
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    });
  } finally {
    await database.drop();
  }
});

test('--role api serves HTTP without worker threads and is ready', async () => {
  const database = await createTestDatabase();
  try {
    const daemon = await startDaemon(
      { DATA_DIR: database.dataDir, ...(database.url ? { DATABASE_URL: database.url } : {}) },
      ['--role', 'api'],
    );
    const ready = await waitReady(daemon);
    assert.is(ready.status, 200);
    assert.equal(ready.body.checks.workers, { ok: true, role: 'api', names: [] });
    assert.not.match(daemon.output(), /worker threads started/);
    daemon.child.kill('SIGTERM');
    assert.is(await daemon.exit, 0);
  } finally {
    await database.drop();
  }
});

test('--role worker runs the worker threads without HTTP; SIGTERM drains and exits 0', async () => {
  const database = await createTestDatabase();
  try {
    const child = spawn(process.execPath, [SVC, 'daemon', 'start', '--role', 'worker'], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        PORT: '0',
        LOG_LEVEL: 'info',
        DATA_DIR: database.dataDir,
        ...(database.url ? { DATABASE_URL: database.url } : { DATABASE_URL: '' }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(child);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exit = new Promise((resolve) => child.once('exit', resolve));
    await waitFor('the worker threads to start', () => /worker threads started/.test(output), {
      timeoutMs: 90_000,
      intervalMs: 200,
      details: () => output,
    });
    assert.match(output, /worker threads started/);
    assert.not.match(output, /Server listening/);
    child.kill('SIGTERM');
    assert.is(await exit, 0, output);
    children.delete(child);
  } finally {
    await database.drop();
  }
});

test('a bad setting stops boot with a sentence naming the variable', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-'));
  const child = spawn(process.execPath, [SVC, 'daemon', 'start'], {
    env: { ...process.env, DATA_DIR: dataDir, RATE_LIMIT_MAX: 'lots' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  rmSync(dataDir, { recursive: true, force: true });
  assert.is(code, 78);
  assert.match(output, /RATE_LIMIT_MAX: expected a whole number/);
});

test.run();
