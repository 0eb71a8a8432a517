// `npm run bench`: the performance figures of the send pipeline, measured in one run on this machine
// against a fresh PostgreSQL database (DATABASE_URL names the server; a bench database is created
// and dropped). Writes bench/results.json and prints a Markdown table for the README.
//
//   1. accept rate of POST /emails/send (daemon ROLE=api) beside bare Fastify + one pg INSERT and
//      bare Fastify alone, all three as child processes loaded by autocannon from this process. The
//      daemon runs as a multi-node deployment does, its rate limits in Redis (BENCH_REDIS_URL, default
//      REDIS_URL, else redis://127.0.0.1:6379), then once more with the in-process limiter (second row);
//   2. BENCH_SENDS queued sends drained to the SMTP sink by a worker node (ROLE=worker, beside an API node), beside plain
//      pooled nodemailer (same pool size, same message, same DKIM key) to the same sink;
//   3. time from the 202 to the sink receiving the message, at half the measured drain rate.
//
// The daemon's nodes run as an operator starts them: `node bin/svc.js daemon start`, from the compiled
// build (bench/children.ts startDaemonProcess). Until 2026-11-26 they ran the TypeScript sources under
// tsx, whose loading in each worker thread (2–6 s of CPU per thread) overlapped the drain and was
// counted in its CPU per message.
//
// Environment: DATABASE_URL (required), BENCH_SENDS (20000), BENCH_DURATION (10 s per autocannon
// run), BENCH_WARMUP (2000 requests before each measured run), BENCH_CONNECTIONS (64), BENCH_LATENCY_SECONDS (10), BENCH_LOG_LEVEL
// (warn: the daemon's log level), SMTP_MAX_CONNECTIONS / SMTP_MAX_MESSAGES (the daemon's defaults),
// BENCH_CPU_PROF=1 (the daemon children write .cpuprofile files to bench/profiles, worker threads
// included), BENCH_KEEP_DB=1, BENCH_ONLY=accept (measurement 1 alone, its three targets in one run: the
// figures go to the accept section of bench/results.json with their own machine line, the rest of the
// file stays as it was).
//
// Flags: --drain measures only the drains (both DKIM-signed and unsigned, beside both nodemailer
// baselines) and the 202 → sink latency, and writes bench/drain-results.json instead; --soak (or
// BENCH_SOAK=1) adds the soak: BENCH_SOAK_SENDS (200000) sends accepted at half the measured drain
// rate, every one counted at the sink, the daemon's RSS at start and end (bench/soak.ts).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes, type Sequelize } from 'sequelize';
import { loadConfig } from '../daemon/config.ts';
import { Domain } from '../daemon/modules/domains/model.ts';
import { openDkimPrivateKey } from '../daemon/modules/domains/keys.ts';
import { loadSecrets } from '../daemon/secrets.ts';
import { measureAcceptRate, type AcceptRunOptions } from './accept.ts';
import {
  BENCH_DIR,
  cpuTimeMs,
  freePort,
  queriesSentBy,
  QUERY_COUNTER,
  startChild,
  startDaemonProcess,
  type Child,
} from './children.ts';
import { createBenchDatabase, SENDER_DOMAIN, vacuumAsAutovacuumWould, type BenchDatabase } from './database.ts';
import { checkDrained, drainFigures, enqueueSends, waitedSendJobs, type DrainFigures } from './drain.ts';
import { measureDeliveryLatency } from './latency.ts';
import { machineInfo } from './machine.ts';
import { checkRun, resultsFile } from './results-file.ts';
import { evaluateGoals, markdownTable, type BenchResults, type BenchSettings } from './report.ts';
import { startBenchSink, type BenchSink } from './sink.ts';
import { benchWebhooks } from './webhooks.ts';
import { benchFootprint } from './footprint.ts';
import { runSoak } from './soak.ts';

function whole(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number, got "${raw}"`);
  return Number(raw);
}

const drainOnly = process.argv.includes('--drain');
const soakWanted = process.argv.includes('--soak') || process.env.BENCH_SOAK === '1';
const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error(
    'npm run bench needs a PostgreSQL server: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres). A fresh bench database is created there and dropped afterwards.',
  );
  process.exit(2);
}
// The daemon's own parsing gives the pool defaults, so the baseline uses the very same numbers.
const daemonDefaults = loadConfig({
  SMTP_MAX_CONNECTIONS: process.env.SMTP_MAX_CONNECTIONS,
  SMTP_MAX_MESSAGES: process.env.SMTP_MAX_MESSAGES,
});
const settings: BenchSettings = {
  connections: whole('BENCH_CONNECTIONS', 64),
  durationSeconds: whole('BENCH_DURATION', 10),
  warmupRequests: whole('BENCH_WARMUP', 2000),
  sends: whole('BENCH_SENDS', 20_000),
  smtpMaxConnections: daemonDefaults.smtpMaxConnections,
  smtpMaxMessages: daemonDefaults.smtpMaxMessages,
  latencySeconds: whole('BENCH_LATENCY_SECONDS', 10),
  daemonLogLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
  redis: true,
  soakSends: soakWanted ? whole('BENCH_SOAK_SENDS', 200_000) : null,
};
/** The Redis of the production-shaped accept run (issue 27: how a deployment of several nodes runs). */
const benchRedisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const cpuProfile =
  process.env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(BENCH_DIR, 'profiles')}`] : [];
const log = (message: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);

const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-'));
const queryCountDir = mkdtempSync(join(tmpdir(), 'svc-bench-queries-'));
const children = new Set<Child>();
// Held outside main() so that the finally block can clean up after a failure half-way.
const held: { sink: BenchSink | null; database: BenchDatabase | null } = { sink: null, database: null };

async function startDaemonChild(
  role: 'api' | 'worker' | 'all',
  smtpPort: number,
  redisUrl: string | null = null,
): Promise<{ child: Child; url: string }> {
  const child = await startDaemonProcess(
    `daemon (ROLE=${role})`,
    {
      BENCH_QUERY_COUNT_DIR: queryCountDir,
      ROLE: role,
      DATA_DIR: dataDir,
      DATABASE_URL: held.database!.url,
      JWT_SECRET,
      SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      // Empty: the in-process limiter (the drains and the latency run do not depend on it).
      REDIS_URL: redisUrl ?? '',
      LOG_LEVEL: settings.daemonLogLevel,
    },
    { nodeArgs: [...cpuProfile, '--import', QUERY_COUNTER] },
  );
  children.add(child);
  return { child, url: child.readyText };
}

async function stopChild(child: Child): Promise<void> {
  await child.stop();
  children.delete(child);
}

async function startBaseline(mode: 'db' | 'none'): Promise<{ child: Child; url: string }> {
  const port = await freePort();
  const child = await startChild(`baseline (${mode})`, 'baseline-server.ts', [mode, String(port)], {
    env: { DATABASE_URL: held.database!.url },
  });
  children.add(child);
  return { child, url: `http://127.0.0.1:${port}` };
}

const loadAverage = () => loadavg().map((l) => Math.round(l * 100) / 100);
const drainTimeoutMs = () => Math.max(120_000, settings.sends * 20);

async function sentLogs(sequelize: Sequelize): Promise<number> {
  const [row] = await sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM email_logs WHERE status = 'SENT'`,
    { type: QueryTypes.SELECT },
  );
  return row.n;
}

async function settledSendJobs(sequelize: Sequelize): Promise<void> {
  let before = -1;
  for (;;) {
    const now = await waitedSendJobs(sequelize);
    if (now === before) return;
    before = now;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Accepts `count` sends through a daemon whose workers are off (ROLE=api), then stops it. */
async function acceptWithWorkersOff(
  sequelize: Sequelize,
  apiKey: string,
  sinkPort: number,
  count: number,
): Promise<number> {
  const api = await startDaemonChild('api', sinkPort);
  const before = await queriesSentBy(queryCountDir, api.child.process.pid!);
  await enqueueSends(api.url, apiKey, count);
  const queued = await waitedSendJobs(sequelize);
  if (queued !== count) throw new Error(`expected ${count} send jobs waiting, found ${queued}`);
  const statements = (await queriesSentBy(queryCountDir, api.child.process.pid!)) - before;
  await stopChild(api.child);
  return statements;
}

/**
 * The scale-out shape (issue 27): an API node (ROLE=api) and a separate worker node (ROLE=worker) on
 * the same PostgreSQL; the worker node drains what is queued to the sink. Both are left running (the
 * latency measure sends through the API node); CPU and statements are the worker node's.
 */
async function svcDrain(
  label: string,
  sink: BenchSink,
  sequelize: Sequelize,
  sentBefore = 0,
): Promise<{
  figures: DrainFigures;
  statementsPerMessage: number;
  daemon: { child: Child; url: string };
  worker: { child: Child };
}> {
  log(`end to end: an API node and a worker node (ROLE=worker) drain the queue to the sink (${label})`);
  sink.reset();
  const api = await startDaemonChild('api', sink.port);
  const worker = await startDaemonChild('worker', sink.port);
  const allPid = worker.child.process.pid!;
  const cpuAtReady = cpuTimeMs(allPid);
  const figures = await drainFigures(`svc worker node (${label})`, sink, settings.sends, drainTimeoutMs(), async () => {
    const now = cpuTimeMs(allPid);
    return now === null || cpuAtReady === null ? null : now - cpuAtReady;
  });
  log(
    `  ${figures.messagesPerSecond} msg/s (${figures.seconds} s), worker node CPU ${figures.senderCpuMsPerMessage} ms/message, load ${loadAverage()}`,
  );
  await checkDrained(sequelize, sentBefore + settings.sends);
  // Since the process started: boot and idle polling are a few hundred statements against N × a few.
  const statements = await queriesSentBy(queryCountDir, allPid);
  return {
    figures,
    statementsPerMessage: Math.round((statements / settings.sends) * 100) / 100,
    daemon: api,
    worker,
  };
}

/** Plain pooled nodemailer to the same sink, DKIM-signed with the domain's key or unsigned. */
async function nodemailerDrain(sink: BenchSink, dkim: { selector: string; key: string } | null): Promise<DrainFigures> {
  const label = dkim ? 'DKIM-signed' : 'unsigned';
  log(`end to end: plain pooled nodemailer to the same sink (${label})`);
  sink.reset();
  const sender = await startChild('nodemailer baseline', 'nodemailer-child.ts', [], {
    env: {
      BENCH_SINK_PORT: String(sink.port),
      BENCH_COUNT: String(settings.sends),
      BENCH_MAX_CONNECTIONS: String(settings.smtpMaxConnections),
      BENCH_MAX_MESSAGES: String(settings.smtpMaxMessages),
      BENCH_DKIM: dkim ? '1' : '0',
      BENCH_DKIM_DOMAIN: SENDER_DOMAIN,
      BENCH_DKIM_SELECTOR: dkim?.selector ?? '',
      BENCH_DKIM_KEY: dkim?.key ?? '',
    },
  });
  children.add(sender);
  // The sender reports its own CPU time when it is done: it exits right after.
  const figures = await drainFigures(
    `pooled nodemailer (${label})`,
    sink,
    settings.sends,
    drainTimeoutMs(),
    async () => {
      await sender.exited;
      const done = sender.lines.find((line) => line.startsWith('done '));
      return done ? Number(done.split(' ')[3]) : null;
    },
  );
  log(
    `  ${figures.messagesPerSecond} msg/s (${figures.seconds} s), sender CPU ${figures.senderCpuMsPerMessage} ms/message, load ${loadAverage()}`,
  );
  children.delete(sender);
  return figures;
}

const ACCEPT_ONLY = process.env.BENCH_ONLY === 'accept';
if (process.env.BENCH_ONLY && !ACCEPT_ONLY)
  throw new Error(`BENCH_ONLY knows only "accept", got "${process.env.BENCH_ONLY}"`);

type AcceptOnly = Pick<BenchResults, 'machine' | 'accept'>;

async function main(): Promise<BenchResults | AcceptOnly> {
  const sink = (held.sink = await startBenchSink());
  log(`creating a bench database on ${new URL(databaseUrl!).host}`);
  const database = (held.database = await createBenchDatabase(databaseUrl!, JWT_SECRET, dataDir));
  const machine = machineInfo(database.postgresVersion);
  const sequelize = database.db.sequelize;
  const auth = { authorization: `Bearer ${database.apiKey}` };
  const acceptOptions: AcceptRunOptions = {
    connections: settings.connections,
    durationSeconds: settings.durationSeconds,
    warmupRequests: settings.warmupRequests,
  };

  // 1. Accept rate: the reference, the baseline, then the daemon (skipped by --drain).
  let accept: BenchResults['accept'] = null;
  if (!drainOnly) {
    log('accept rate: bare Fastify (no database)');
    const bare = await startBaseline('none');
    const bareFastify = await measureAcceptRate('bare Fastify', bare.url, {}, acceptOptions, bare.child.process.pid!);
    log(
      `  ${bareFastify.requestsPerSecond} req/s, p50 ${bareFastify.latencyP50Ms} ms, p99 ${bareFastify.latencyP99Ms} ms, server CPU ${bareFastify.serverCpuMsPerRequest} ms/request`,
    );
    await stopChild(bare.child);
    log('accept rate: bare Fastify + one pg INSERT');
    const insert = await startBaseline('db');
    const baselineInsert = await measureAcceptRate(
      'Fastify + INSERT',
      insert.url,
      {},
      acceptOptions,
      insert.child.process.pid!,
    );
    log(
      `  ${baselineInsert.requestsPerSecond} req/s, p50 ${baselineInsert.latencyP50Ms} ms, p99 ${baselineInsert.latencyP99Ms} ms, server CPU ${baselineInsert.serverCpuMsPerRequest} ms/request`,
    );
    await stopChild(insert.child);
    const svcRun = async (label: string, redisUrl: string | null) => {
      log(`accept rate: svc daemon (ROLE=api), POST /emails/send, ${label}`);
      const api = await startDaemonChild('api', sink.port, redisUrl);
      const pid = api.child.process.pid!;
      const statementsAtReady = await queriesSentBy(queryCountDir, pid);
      const measured = await measureAcceptRate('svc', api.url, auth, acceptOptions, pid);
      // Over the warm-up and the measured run: grouped commits make it less than one per request.
      const statements = (await queriesSentBy(queryCountDir, pid)) - statementsAtReady;
      const answered = acceptOptions.warmupRequests + measured.requests;
      const figures = { ...measured, statementsPerRequest: Math.round((statements / answered) * 100) / 100 };
      log(
        `  ${figures.requestsPerSecond} req/s, p50 ${figures.latencyP50Ms} ms, p99 ${figures.latencyP99Ms} ms, server CPU ${figures.serverCpuMsPerRequest} ms/request, ${figures.statementsPerRequest} SQL statements/request`,
      );
      if (figures.non2xx > 0)
        throw new Error(`svc answered non-2xx during the accept run: ${JSON.stringify(figures.statusCodes)}`);
      // Requests autocannon abandoned at the end of its run may still be committing: let them land.
      await settledSendJobs(sequelize);
      await stopChild(api.child);
      return figures;
    };
    const svcAccept = await svcRun(`rate limits in Redis (${new URL(benchRedisUrl).host})`, benchRedisUrl);
    const svcInProcessLimiter = await svcRun('in-process rate limiter', null);
    accept = { svc: svcAccept, svcInProcessLimiter, baselineInsert, bareFastify };
    if (ACCEPT_ONLY) return { machine, accept };
  }

  // 2. End to end, DKIM-signed. The accept run left its sends queued: they are not part of this measurement.
  await sequelize.query(`DELETE FROM jobs WHERE queue = 'send'`);
  await sequelize.query(
    `UPDATE email_logs SET status = 'FAILED', error = 'bench: accept-rate run, never delivered' WHERE status = 'QUEUED'`,
  );
  await vacuumAsAutovacuumWould(sequelize, 'after the accept runs', ['jobs', 'email_logs'], log);
  log(`end to end: accepting ${settings.sends} sends with the workers off`);
  const acceptStatements = await acceptWithWorkersOff(sequelize, database.apiKey, sink.port, settings.sends);
  const signed = await svcDrain('DKIM-signed', sink, sequelize);

  // 3. 202 → sink at half the drain rate, on the same daemon (after a short warm-up of its API).
  await vacuumAsAutovacuumWould(sequelize, 'after the drain', ['jobs'], log);
  const rate = Math.max(1, signed.figures.messagesPerSecond / 2);
  log(`latency: paced sends at ${Math.round(rate)}/s for ${settings.latencySeconds} s`);
  sink.reset();
  await measureDeliveryLatency(signed.daemon.url, database.apiKey, sink, rate, Math.min(2, settings.latencySeconds));
  sink.reset();
  const latency = await measureDeliveryLatency(signed.daemon.url, database.apiKey, sink, rate, settings.latencySeconds);
  log(`  p50 ${latency.deliveryP50Ms} ms, p99 ${latency.deliveryP99Ms} ms`);
  await stopChild(signed.daemon.child);
  await stopChild(signed.worker.child);

  // 4. End to end, unsigned: the sends are accepted from the verified domain, which is then set back
  // to pending, so the drain finds no DKIM key to sign with (the drain does not re-check verification).
  log(`end to end: accepting ${settings.sends} more sends with the workers off (unsigned drain)`);
  await acceptWithWorkersOff(sequelize, database.apiKey, sink.port, settings.sends);
  await sequelize.query(`UPDATE domains SET status = 'pending' WHERE name = :name`, {
    replacements: { name: SENDER_DOMAIN },
  });
  const sentBefore = await sentLogs(sequelize);
  const unsigned = await svcDrain('unsigned', sink, sequelize, sentBefore);
  await stopChild(unsigned.daemon.child);
  await stopChild(unsigned.worker.child);
  await sequelize.query(`UPDATE domains SET status = 'verified' WHERE name = :name`, {
    replacements: { name: SENDER_DOMAIN },
  });

  const domain = await Domain.findOne({ where: { tenantId: database.tenantId, name: SENDER_DOMAIN } });
  const secrets = loadSecrets(dataDir, JWT_SECRET);
  const key = {
    selector: domain!.dkimSelector,
    key: openDkimPrivateKey(secrets.encryptionKey, domain!.dkimPrivateKeySealed),
  };
  const nodemailerSigned = await nodemailerDrain(sink, key);
  const nodemailerUnsigned = await nodemailerDrain(sink, null);

  // 5. The soak (--soak): a fresh daemon, sends paced at half the signed drain rate.
  let soak: BenchResults['soak'] = null;
  if (settings.soakSends) {
    const daemon = await startDaemonChild('all', sink.port);
    soak = await runSoak({
      url: daemon.url,
      apiKey: database.apiKey,
      sink,
      pid: daemon.child.process.pid!,
      ratePerSecond: rate,
      sends: settings.soakSends,
      log,
    });
    await stopChild(daemon.child);
  }

  const partial = {
    machine,
    soak,
    settings,
    accept,
    drain: { svc: signed.figures, nodemailer: nodemailerSigned, svcUnsigned: unsigned.figures, nodemailerUnsigned },
    latency,
    loadAverageAtEnd: loadAverage(),
    queriesPerSend: {
      accept: Math.round((acceptStatements / settings.sends) * 10) / 10,
      delivery: signed.statementsPerMessage,
      baselineInsert: 1,
    },
  };
  return { ...partial, goals: evaluateGoals(partial) };
}

async function cleanUp(): Promise<void> {
  for (const child of children) await child.stop().catch(() => {});
  await held.sink?.close().catch(() => {});
  const { database } = held;
  if (database && process.env.BENCH_KEEP_DB !== '1')
    await database.drop().catch((error: Error) => log(`could not drop the bench database: ${error.message}`));
  else if (database) log(`kept the bench database: ${database.url}`);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(queryCountDir, { recursive: true, force: true });
}

// Ctrl-C: the children get the signal too; still drop the bench database rather than leave it behind.
process.once('SIGINT', () => {
  log('interrupted: cleaning up');
  void cleanUp().finally(() => process.exit(130));
});

/** An accept-only run replaces the accept figures (and their goals) and records its own machine line. */
function writeAcceptOnly(run: AcceptOnly): void {
  // bench:check's short run: its own file, the kept figures untouched.
  if (checkRun()) return writeFileSync(resultsFile('results.json'), JSON.stringify(run, null, 2) + '\n');
  const file = join(BENCH_DIR, 'results.json');
  const previous = JSON.parse(readFileSync(file, 'utf8')) as BenchResults & { acceptMachine?: unknown };
  const merged = { ...previous, accept: run.accept, acceptMachine: run.machine };
  const goals = evaluateGoals(merged);
  writeFileSync(
    file,
    JSON.stringify({ ...merged, goals: [...goals.slice(0, 2), ...previous.goals.slice(2)] }, null, 2) + '\n',
  );
  for (const goal of goals.slice(0, 2))
    log(`${goal.name}: ${goal.value} (goal ${goal.target}) ${goal.met ? 'met' : 'MISSED'}`);
  log(
    `wrote the accept section of bench/results.json (load average ${run.machine.loadAverageAtStart.join(' / ')} at start)`,
  );
}

async function reportAll(results: BenchResults): Promise<void> {
  const file = drainOnly ? 'drain-results.json' : 'results.json';
  writeFileSync(resultsFile(file), JSON.stringify(results, null, 2) + '\n');
  console.log(markdownTable(results));
  const missed = results.goals.filter((g) => !g.met);
  if (missed.length) log(`goals missed: ${missed.map((g) => `${g.name} = ${g.value} (goal ${g.target})`).join('; ')}`);
  log(`wrote bench/${file}`);
  // Footprint: boot to ready, idle and peak RSS (bench/footprint.ts, its own results file).
  if (!drainOnly) await benchFootprint(databaseUrl!);
}

try {
  const run = await main();
  if (!('goals' in run)) writeAcceptOnly(run);
  else await reportAll(run);
} catch (error) {
  process.exitCode = 1;
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
} finally {
  await cleanUp();
}

// Last, webhook deliveries (bench/webhooks.ts, its own database and results file), a phase of its own: run
// after the send pipeline's children are gone, and also when that part failed. It reports the fan-out rate
// to local receivers (one endpoint; ten: goal ≥ 2,000/s) and what a 2 s and a dead endpoint cost the ten
// healthy ones (goal ≤ 10 %), alone and beside them alternating in the same run.
try {
  if (!drainOnly && !ACCEPT_ONLY) await benchWebhooks(databaseUrl!, log);
} catch (error) {
  process.exitCode = 1;
  console.error(error instanceof Error ? (error.stack ?? error.message) : error);
}
