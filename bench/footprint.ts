// Footprint of the daemon as an operator runs it (`node bin/svc.js daemon start`, the compiled build,
// every role in one process): boot to /health/ready, idle resident memory on PostgreSQL and on the
// embedded PGlite, and the peak during a full-speed drain. `npm run bench:footprint` (also run by
// `npm run bench`); writes bench/footprint-results.json. Goals (issue 20): idle ≤ 250 MB on
// PostgreSQL, ≤ 450 MB embedded; peak ≤ 400 MB on PostgreSQL; ready ≤ 3 s (PostgreSQL), ≤ 5 s embedded.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BENCH_DIR, ROOT_DIR, freePort } from './children.ts';
import { createBenchDatabase } from './database.ts';
import { enqueueSends } from './drain.ts';
import { startBenchSink } from './sink.ts';
import { machineInfo } from './machine.ts';

const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const IDLE_SETTLE_MS = 10_000;
const DRAIN_SENDS = Number(process.env.BENCH_FOOTPRINT_SENDS ?? 10_000);
const log = (message: string) => console.error(`[footprint ${new Date().toISOString().slice(11, 19)}] ${message}`);

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024);
}

interface Running {
  child: ChildProcess;
  url: string;
  readyMs: number;
  stop(): Promise<void>;
}

async function startDaemon(env: Record<string, string>): Promise<Running> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, [join(ROOT_DIR, 'bin', 'svc.js'), 'daemon', 'start'], {
    cwd: ROOT_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      JWT_SECRET,
      RATE_LIMIT_MAX: '10000000',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode} before it was ready`);
    const ready = await fetch(`${url}/health/ready`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const readyMs = Math.round(performance.now() - started);
  return {
    child,
    url,
    readyMs,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function idleRss(running: Running): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
  return rssMb(running.child.pid!);
}

export async function benchFootprint(databaseUrl: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-footprint-'));
  const sink = await startBenchSink();
  const machine = machineInfo(null);
  const database = await createBenchDatabase(databaseUrl, JWT_SECRET, dataDir);
  machine.postgres = database.postgresVersion;
  const results: Record<string, number | string> = {};
  try {
    // PostgreSQL: boot (the build already exists after the first daemon start), idle, drain peak.
    await (
      await startDaemon({ DATABASE_URL: database.url, DATA_DIR: dataDir, SMTP_URL: `smtp://127.0.0.1:${sink.port}` })
    ).stop();
    const daemon = await startDaemon({
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
    });
    results.postgresReadyMs = daemon.readyMs;
    results.postgresIdleRssMb = await idleRss(daemon);
    log(`PostgreSQL: ready in ${daemon.readyMs} ms, idle ${results.postgresIdleRssMb} MB`);
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(daemon.child.pid!))), 100);
    sink.reset();
    const drainStarted = performance.now();
    await enqueueSends(daemon.url, database.apiKey, DRAIN_SENDS);
    await sink.waitForCount(DRAIN_SENDS, 600_000);
    clearInterval(sampler);
    results.drainSends = DRAIN_SENDS;
    results.drainSeconds = Math.round((performance.now() - drainStarted) / 100) / 10;
    results.postgresPeakRssMb = peak;
    log(`PostgreSQL: accepted and delivered ${DRAIN_SENDS} in ${results.drainSeconds} s, peak ${peak} MB`);
    await daemon.stop();

    // Embedded: a fresh data dir (first boot runs initdb), then a second boot of the same.
    const embeddedDir = join(dataDir, 'embedded');
    const first = await startDaemon({ DATA_DIR: embeddedDir });
    results.embeddedFirstReadyMs = first.readyMs;
    await first.stop();
    const second = await startDaemon({ DATA_DIR: embeddedDir });
    results.embeddedReadyMs = second.readyMs;
    results.embeddedIdleRssMb = await idleRss(second);
    log(
      `embedded: first boot ${first.readyMs} ms, ready in ${second.readyMs} ms, idle ${results.embeddedIdleRssMb} MB`,
    );
    await second.stop();
  } finally {
    await database.drop();
    await sink.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const report = { measuredAt: new Date().toISOString(), machine, results };
  writeFileSync(join(BENCH_DIR, 'footprint-results.json'), JSON.stringify(report, null, 2) + '\n');
  console.log(JSON.stringify(report, null, 2));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl)
    throw new Error('bench:footprint needs DATABASE_URL (a PostgreSQL server where it may create a database)');
  await benchFootprint(databaseUrl);
}
