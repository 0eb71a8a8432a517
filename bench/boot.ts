// Boot of the daemon as an operator runs it (`node bin/svc.js daemon start`, NODE_ENV=production,
// every role in one process, the build already made): a restart on PostgreSQL, a first boot of the
// embedded PGlite (a new data dir, unpacked from the build's template) and its restart. Each is timed from
// the spawn to the first 200 of /health/ready, several runs, median; with the daemon's CPU time until
// then (less sensitive to other load than the wall clock), where its time went (the "daemon ready"
// log line, main.ts), and the resident memory at idle after the boot. `npm run bench:boot`; writes
// bench/boot-results.json. Goals (issue 27): restart ≤ 3 s on PostgreSQL, ≤ 4 s embedded; embedded
// first boot ≤ 8 s and ≤ 450 MB at idle after it. BENCH_BOOT_RUNS (default 5), BENCH_BOOT_IDLE_MS.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT_DIR, cpuTimeMs, freePort } from './children.ts';
import { createBenchDatabase } from './database.ts';
import { machineInfo } from './machine.ts';
import { resultsFile } from './results-file.ts';
import { ensureDaemonBuild, ensureEmbeddedTemplate } from '../daemon/build.mjs';

const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const RUNS = Number(process.env.BENCH_BOOT_RUNS ?? 5);
const IDLE_SETTLE_MS = Number(process.env.BENCH_BOOT_IDLE_MS ?? 10_000);
const READY_TIMEOUT_MS = 300_000;
const log = (message: string) => console.error(`[boot ${new Date().toISOString().slice(11, 19)}] ${message}`);

interface Boot {
  /** Spawn to the first 200 of /health/ready. */
  readyMs: number;
  /** CPU time of the daemon (every thread) until then. */
  cpuMs: number | null;
  rssAtReadyMb: number;
  /** The daemon's own account (main.ts BootTimings). */
  phases: Record<string, number> | null;
  /** 1-minute load average when the run started. */
  load: number;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : Math.round((sorted[middle - 1] + sorted[middle]) / 2);
};

const DAEMON_ARGV = [join(ROOT_DIR, 'bin', 'svc.js'), 'daemon', 'start'];
// The baseline of the restart on PostgreSQL (bench:check's ratio): a bare Node process with Fastify
// answering /health/ready, spawned and probed the same way — what any Node service pays to be up.
const BARE_FASTIFY_ARGV = [
  '--input-type=module',
  '-e',
  `import Fastify from 'fastify'; const app = Fastify(); app.get('/health/ready', async () => ({ ok: true }));
   await app.listen({ port: Number(process.env.PORT), host: process.env.HOST });
   process.once('SIGTERM', () => app.close().then(() => process.exit(0)));`,
];

/** Boots the daemon (or `argv`), waits for ready, optionally idles, stops it; returns what it measured. */
async function boot(
  env: Record<string, string>,
  idle: boolean,
  argv: string[] = DAEMON_ARGV,
): Promise<Boot & { idleRssMb?: number }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const load = Math.round(loadavg()[0] * 100) / 100;
  const started = performance.now();
  const child = spawn(process.execPath, argv, {
    cwd: ROOT_DIR,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      JWT_SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let phases: Record<string, number> | null = null;
  let buffered = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (line.includes('"daemon ready"')) phases = (JSON.parse(line) as { bootMs: Record<string, number> }).bootMs;
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the daemon exited with ${child.exitCode} before it was ready`);
      if (performance.now() - started > READY_TIMEOUT_MS) throw new Error('the daemon was not ready in 5 minutes');
      const ready = await fetch(`${url}/health/ready`).then(
        (response) => response.status === 200,
        () => false,
      );
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const readyMs = Math.round(performance.now() - started);
    const measured: Boot & { idleRssMb?: number } = {
      readyMs,
      cpuMs: cpuTimeMs(child.pid!),
      rssAtReadyMb: rssMb(child.pid!),
      phases,
      load,
    };
    if (idle) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_SETTLE_MS));
      measured.idleRssMb = rssMb(child.pid!);
    }
    return measured;
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

interface Series {
  runs: Boot[];
  medianReadyMs: number;
  medianCpuMs: number | null;
  medianPhases: Record<string, number>;
  idleRssMb: number | null;
}

/** `runs` boots; the first one also idles to measure resident memory. `prepare` runs before each. */
async function series(
  name: string,
  env: () => Record<string, string>,
  prepare?: () => void,
  argv: string[] = DAEMON_ARGV,
): Promise<Series> {
  const runs: Boot[] = [];
  let idleRssMb: number | null = null;
  for (let run = 0; run < RUNS; run++) {
    prepare?.();
    const result = await boot(env(), run === 0, argv);
    if (result.idleRssMb !== undefined) idleRssMb = result.idleRssMb;
    delete result.idleRssMb;
    runs.push(result);
    log(
      `${name} #${run + 1}: ready ${result.readyMs} ms, CPU ${result.cpuMs} ms, RSS ${result.rssAtReadyMb} MB` +
        `${run === 0 ? `, idle ${idleRssMb} MB` : ''} (load ${result.load}) ${JSON.stringify(result.phases)}`,
    );
  }
  const phaseNames = Object.keys(runs.find((run) => run.phases)?.phases ?? {});
  const cpu = runs.map((run) => run.cpuMs).filter((value): value is number => value !== null);
  return {
    runs,
    medianReadyMs: median(runs.map((run) => run.readyMs)),
    medianCpuMs: cpu.length ? median(cpu) : null,
    medianPhases: Object.fromEntries(
      phaseNames.map((phase) => [phase, median(runs.map((run) => run.phases?.[phase] ?? 0))]),
    ),
    idleRssMb,
  };
}

export async function benchBoot(databaseUrl: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-boot-'));
  const machine = machineInfo(null);
  // The build is made before anything is timed, as `npm install` makes it (`npm run build`, npm's
  // "prepare"): these are boots of an installed daemon, the embedded database's template included.
  await ensureEmbeddedTemplate(await ensureDaemonBuild());
  const database = await createBenchDatabase(databaseUrl, JWT_SECRET, dataDir);
  machine.postgres = database.postgresVersion;
  await database.db.close();
  const results: Record<string, Series> = {};
  try {
    const postgres = { DATABASE_URL: database.url, DATA_DIR: dataDir };
    await boot(postgres, false); // the first boot of this database records the secret's key-check value
    results.postgresRestart = await series('PostgreSQL restart', () => postgres);
    results.bareFastify = await series('bare Node + Fastify', () => ({}), undefined, BARE_FASTIFY_ARGV);

    let embeddedDir = '';
    let fresh = 0;
    results.embeddedFirstBoot = await series(
      'embedded first boot',
      () => ({ DATA_DIR: embeddedDir }),
      () => {
        if (embeddedDir) rmSync(embeddedDir, { recursive: true, force: true });
        embeddedDir = join(dataDir, `embedded-${fresh++}`);
      },
    );
    results.embeddedRestart = await series('embedded restart', () => ({ DATA_DIR: embeddedDir }));
  } finally {
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const summary = Object.fromEntries(
    Object.entries(results).map(([name, result]) => [
      name,
      {
        medianReadyMs: result.medianReadyMs,
        medianCpuMs: result.medianCpuMs,
        idleRssMb: result.idleRssMb,
        medianPhases: result.medianPhases,
      },
    ]),
  );
  const report = {
    measuredAt: new Date().toISOString(),
    machine,
    loadAverageAtEnd: loadavg().map((value) => Math.round(value * 100) / 100),
    runs: RUNS,
    summary,
    results,
  };
  writeFileSync(resultsFile('boot-results.json'), JSON.stringify(report, null, 2) + '\n');
  console.log(JSON.stringify({ machine, loadAverageAtEnd: report.loadAverageAtEnd, summary }, null, 2));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl)
    throw new Error('bench:boot needs DATABASE_URL (a PostgreSQL server where it may create a database)');
  await benchBoot(databaseUrl);
}
