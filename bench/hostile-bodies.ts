// Hostile request bodies against a running daemon (issue 48 §1): 20 requests of 10 MB of JSON with
// 900,000 keys (`{"data":{"k0":1,…,"k899999":1}}`) sent together to POST /emails/send, first without
// credentials, then with a live API key, while a separate thread polls GET /health every 10 ms. What
// the daemon's event loop went through is read from outside, as /health's latency (its p99 and max
// track the longest stall), and from /metrics when it exposes an event-loop figure (old and new names
// are both looked for). The daemon runs as an operator starts it: `node bin/svc.js daemon start`,
// NODE_ENV=production, every role, PostgreSQL and Redis, the production rate limit (300 a minute).
//
// DATABASE_URL=postgres://… REDIS_URL=redis://… npm run bench:hostile [-- --label after]
// Writes bench/hostile-bodies-results.json (one entry per label). Goals: /health p99 ≤ 50 ms and the
// event loop's max delay ≤ 50 ms in both phases. The figures "before" come from running this same
// file inside a checkout of the code before the change (bench/README.md says how).
import { request as httpRequest } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BENCH_DIR, startDaemonProcess } from './children.ts';
import { createBenchDatabase } from './database.ts';
import { machineInfo } from './machine.ts';

const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const REQUESTS = Number(process.env.BENCH_HOSTILE_REQUESTS ?? 20);
const KEYS = 900_000;
const HEALTH_EVERY_MS = 10;
/** How long /health is polled before the hostile requests and after the last of them is answered. */
const QUIET_MS = 1_000;
const GOAL_MS = 50;
const log = (message: string) => console.error(`[hostile ${new Date().toISOString().slice(11, 19)}] ${message}`);

function argument(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? undefined : process.argv[at + 1];
}

/** `{"data":{"k0":1,…,"k899999":1}}`, the body of issue 48. */
function hostileBody(): Buffer {
  const parts = ['{"data":{'];
  for (let key = 0; key < KEYS; key++) parts.push(key === 0 ? `"k${key}":1` : `,"k${key}":1`);
  parts.push('}}');
  return Buffer.from(parts.join(''));
}

interface Outcome {
  /** HTTP status, or the socket error when none came. */
  status: number | string;
  ms: number;
}

/** One request on its own connection; answered with the status, or the error that ended it first. */
function send(url: string, body: Buffer, headers: Record<string, string>): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const settle = (status: number | string) => {
      if (settled) return;
      settled = true;
      resolve({ status, ms: Math.round(performance.now() - started) });
    };
    const req = httpRequest(
      `${url}/emails/send`,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(body.length), ...headers },
      },
      (res) => {
        res.resume();
        settle(res.statusCode ?? 0);
      },
    );
    // A server that answers early and closes makes the rest of the upload fail: the answer counts.
    req.on('error', (error: NodeJS.ErrnoException) => setTimeout(() => settle(error.code ?? error.message), 50));
    req.end(body);
  });
}

// The poller runs in its own thread, so that writing 200 MB of bodies in this one cannot delay it.
const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const samples = [];
let running = true;
parentPort.on('message', () => { running = false; });
function poll() {
  if (!running) return parentPort.postMessage(samples);
  const started = performance.now();
  http.get(workerData.url + '/health', { agent }, (res) => {
    res.resume();
    res.on('end', () => {
      samples.push({ at: Date.now(), ms: performance.now() - started, status: res.statusCode });
      setTimeout(poll, workerData.every);
    });
  }).on('error', (error) => {
    samples.push({ at: Date.now(), ms: performance.now() - started, status: String(error.code) });
    setTimeout(poll, workerData.every);
  });
}
poll();
`;

interface Sample {
  at: number;
  ms: number;
  status: number | string;
}

function startPoller(url: string): { stop(): Promise<Sample[]> } {
  const worker = new Worker(POLLER, { eval: true, workerData: { url, every: HEALTH_EVERY_MS } });
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (samples: Sample[]) => void worker.terminate().then(() => resolve(samples)));
        worker.postMessage('stop');
      }),
  };
}

const EVENT_LOOP_METRICS = [
  'svc_event_loop_delay_max_seconds',
  'nodejs_eventloop_lag_max_seconds',
  'svc_event_loop_delay_seconds_max',
];

/** The event-loop figures /metrics exposes now (seconds), by name: whichever of the known names it has. */
async function eventLoopMetrics(url: string): Promise<Record<string, number>> {
  const text = await fetch(`${url}/metrics`).then(
    (response) => (response.ok ? response.text() : ''),
    () => '',
  );
  const found: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(\{[^}]*\})?\s+([0-9.eE+-]+)$/.exec(line.trim());
    if (!match) continue;
    if (EVENT_LOOP_METRICS.includes(match[1]) || /^svc_event_loop_delay_seconds_bucket/.test(match[1]))
      found[match[1] + (match[2] ?? '')] = Number(match[3]);
  }
  return found;
}

function eventLoopMaxMs(before: Record<string, number>, after: Record<string, number>): number | null {
  const gauges = Object.entries(after).filter(([key]) => !key.includes('_bucket'));
  if (gauges.length) return Math.max(...gauges.map(([, seconds]) => Math.round(seconds * 1000)));
  const buckets = Object.entries(after)
    .map(([key, count]) => ({ le: /le="([^"]+)"/.exec(key)?.[1], added: count - (before[key] ?? 0) }))
    .filter((bucket): bucket is { le: string; added: number } => bucket.le !== undefined)
    .map((bucket) => ({ le: bucket.le === '+Inf' ? Infinity : Number(bucket.le), added: bucket.added }))
    .sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.added;
  if (total === undefined) return null;
  const first = buckets.find((bucket) => bucket.added === total);
  return first ? first.le * 1000 : null;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : NaN;
const round = (ms: number) => Math.round(ms * 10) / 10;

interface Phase {
  name: string;
  statuses: Record<string, number>;
  hostileMs: { p50: number; max: number };
  health: { samples: number; p50: number; p99: number; max: number; failed: number };
  /** The event-loop figures /metrics gave after the phase (read once before it, too, which resets the old one). */
  metricsAfter: Record<string, number>;
  metricsBefore: Record<string, number>;
  /**
   * The longest event-loop delay in the phase by the daemon's own figure: the max gauge where /metrics has one
   * (the old monitor resets it at each scrape), else the upper bound of the highest histogram bucket that
   * counted a sample during the phase; null when /metrics has neither.
   */
  eventLoopMaxMs: number | null;
  goalsMet: boolean;
}

async function phase(
  name: string,
  url: string,
  count: number,
  body: Buffer,
  headers: Record<string, string>,
): Promise<Phase> {
  const metricsBefore = await eventLoopMetrics(url);
  const poller = startPoller(url);
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  const from = Date.now();
  const outcomes = await Promise.all(Array.from({ length: count }, () => send(url, body, headers)));
  await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
  const samples = (await poller.stop()).filter((sample) => sample.at >= from);
  const metricsAfter = await eventLoopMetrics(url);
  const latencies = samples.map((sample) => sample.ms).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const outcome of outcomes) statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
  const times = outcomes.map((outcome) => outcome.ms).sort((a, b) => a - b);
  const health = {
    samples: samples.length,
    p50: round(percentile(latencies, 50)),
    p99: round(percentile(latencies, 99)),
    max: round(latencies.at(-1) ?? NaN),
    failed: samples.filter((sample) => sample.status !== 200).length,
  };
  const loopMax = eventLoopMaxMs(metricsBefore, metricsAfter);
  const result: Phase = {
    name,
    statuses,
    hostileMs: { p50: percentile(times, 50), max: times.at(-1) ?? NaN },
    health,
    metricsBefore,
    metricsAfter,
    eventLoopMaxMs: loopMax,
    goalsMet: health.p99 <= GOAL_MS && health.failed === 0 && (loopMax === null || loopMax <= GOAL_MS),
  };
  log(
    `${name}: ${JSON.stringify(statuses)} in p50 ${result.hostileMs.p50} / max ${result.hostileMs.max} ms; ` +
      `/health p50 ${health.p50} p99 ${health.p99} max ${health.max} ms (${health.samples} polls, ${health.failed} failed); ` +
      `event loop max (daemon's figure) ${loopMax ?? 'n/a'} ms`,
  );
  return result;
}

async function main(): Promise<void> {
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) throw new Error('set DATABASE_URL to a PostgreSQL server where the bench may create a database');
  const redisUrl = process.env.BENCH_REDIS_URL ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const label = argument('label') ?? 'after';
  const out = argument('out') ?? join(BENCH_DIR, 'hostile-bodies-results.json');
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-hostile-'));
  const database = await createBenchDatabase(baseUrl, JWT_SECRET, dataDir);
  const machine = machineInfo(database.postgresVersion);
  const daemon = await startDaemonProcess('daemon', {
    ROLE: 'all',
    RATE_LIMIT_MAX: '300',
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    DATA_DIR: dataDir,
    JWT_SECRET,
    LOG_LEVEL: 'warn',
  });
  const url = daemon.readyText;
  try {
    const body = hostileBody();
    log(
      `daemon at ${url}; ${REQUESTS} bodies of ${(body.length / 1e6).toFixed(2)} MB, ${KEYS.toLocaleString('en-US')} keys`,
    );
    const idle = await phase('idle (no hostile request)', url, 0, Buffer.alloc(0), {});
    const unauthenticated = await phase('unauthenticated', url, REQUESTS, body, {});
    const key = { authorization: `Bearer ${database.apiKey}` };
    const authenticated = await phase('API key', url, REQUESTS, body, key);
    // Once more each: the first burst also pays what a daemon does once (its first use of the key, the
    // route's error serializer compiled on first use); the second is the steady state.
    const unauthenticatedAgain = await phase('unauthenticated, again', url, REQUESTS, body, {});
    const authenticatedAgain = await phase('API key, again', url, REQUESTS, body, key);
    const results = existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>) : {};
    results[label] = {
      machine,
      bodyBytes: body.length,
      requests: REQUESTS,
      phases: [idle, unauthenticated, authenticated, unauthenticatedAgain, authenticatedAgain],
    };
    writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
    log(`wrote ${out} (${label})`);
  } finally {
    await daemon.stop();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
