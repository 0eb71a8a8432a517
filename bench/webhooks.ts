// `npm run bench:webhooks` (also the last part of `npm run bench`): webhook deliveries per second,
// through the daemon's real webhook-worker thread, to local receivers that answer 200 at once.
//
//   1. BENCH_WEBHOOKS deliveries to one endpoint;
//   2. the same number spread over ten endpoints;
//   3. the same ten again, beside one endpoint that answers after 2 s and one that refuses
//      connections, each with a backlog as large as a healthy endpoint's: the healthy endpoints'
//      rate, and what the two cost them against run 2.
// Runs 2 and 3 alternate for ROUNDS rounds and each sums its rounds (see below).
// Rates are read at the receivers, from the first arrival to the last, so the worker's start-up and
// the claim of the first batch do not count. The receivers run in this process's main thread, the
// worker in its own thread, PostgreSQL beside them: on a small machine the three share the cores.
//
// `npm run bench:webhooks -- --e2e` measures events produced by sends instead (webhooks-e2e.ts).
//
// Environment: DATABASE_URL (required), BENCH_WEBHOOKS (20000: phases of about two seconds at ten thousand a second), BENCH_KEEP_DB=1.
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { Sequelize } from 'sequelize';
import { loadConfig } from '../daemon/config.ts';
import { loadSecrets } from '../daemon/secrets.ts';
import { seal } from '../daemon/crypto/sealed.ts';
import { DAEMON_WORKERS, startWorkers, type WorkerPool } from '../daemon/jobs/index.ts';
import { generateWebhookSecret } from '../shared/webhooks.ts';
import { freePort } from './children.ts';
import { createBenchDatabase, type BenchDatabase } from './database.ts';
import { resultsFile } from './results-file.ts';

const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const SLOW_ANSWER_MS = 2_000;
/** Rounds of (ten alone, ten beside the slow and the dead one): BENCH_WEBHOOK_ROUNDS, default 4 (phases of a second or two swing by tens of percent alone). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 4) || 4);

export interface WebhookRate {
  label: string;
  endpoints: number;
  deliveries: number;
  seconds: number;
  deliveriesPerSecond: number;
  /** Each round's own rate, when the figure sums several. */
  rounds?: number[];
}

export interface WebhookBenchResults {
  date: string;
  /** 1-, 5- and 15-minute load averages before and after: the figures mean little on a busy machine without them. */
  loadAverage: { atStart: number[]; atEnd: number[] };
  deliveries: number;
  oneEndpoint: WebhookRate;
  tenEndpoints: WebhookRate;
  tenBesideSlowAndDead: WebhookRate;
  /** How much slower the ten healthy endpoints were beside the slow and the dead one, in %. */
  costOfSlowAndDeadPercent: number;
  goals: Array<{ name: string; value: number; target: string; met: boolean }>;
}

interface Receiver {
  url: string;
  count: number;
  firstAt: number | null;
  lastAt: number | null;
  reset(): void;
  close(): Promise<void>;
}

async function startReceiver(answerAfterMs = 0): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    count: 0,
    firstAt: null,
    lastAt: null,
    reset() {
      receiver.count = 0;
      receiver.firstAt = receiver.lastAt = null;
    },
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = () => {
        const now = performance.now();
        receiver.count += 1;
        receiver.firstAt ??= now;
        receiver.lastAt = now;
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      };
      if (answerAfterMs > 0) setTimeout(answer, answerAfterMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

async function createEndpoint(
  sequelize: Sequelize,
  tenantId: string,
  url: string,
  encryptionKey: Buffer,
): Promise<string> {
  const [rows] = await sequelize.query(
    `INSERT INTO webhook_endpoints (tenant_id, url, events, secret_encrypted) VALUES (:tenantId, :url, ARRAY['email.sent'], :sealed) RETURNING id`,
    { replacements: { tenantId, url, sealed: seal(encryptionKey, generateWebhookSecret()) } },
  );
  return (rows as Array<{ id: string }>)[0].id;
}

/** `perEndpoint` deliveries due now for each endpoint, interleaved as a busy fan-out would leave them. */
async function insertDeliveries(
  sequelize: Sequelize,
  tenantId: string,
  endpointIds: string[],
  perEndpoint: number,
): Promise<void> {
  await sequelize.query(
    `INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_type, payload, due_at)
     SELECT :tenantId, e.id, 'email.sent',
            json_build_object('id', gen_random_uuid(), 'type', 'email.sent', 'createdAt', now(), 'tenantId', CAST(:tenantId AS uuid),
                              'data', json_build_object('emailId', gen_random_uuid(), 'to', json_build_array('reader@example.com'), 'n', g)),
            now() + g * interval '1 microsecond'
       FROM generate_series(1, CAST(:perEndpoint AS int)) g CROSS JOIN unnest(CAST(:endpointIds AS uuid[])) AS e(id)`,
    { replacements: { tenantId, endpointIds: `{${endpointIds.join(',')}}`, perEndpoint } },
  );
}

async function waitForCount(receivers: Receiver[], expected: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (receivers.reduce((sum, r) => sum + r.count, 0) < expected) {
    if (Date.now() > deadline)
      throw new Error(
        `only ${receivers.reduce((sum, r) => sum + r.count, 0)} of ${expected} deliveries arrived within ${timeoutMs / 1000} s`,
      );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function rateOf(label: string, receivers: Receiver[], deliveries: number): WebhookRate {
  const first = Math.min(...receivers.map((r) => r.firstAt ?? Infinity));
  const last = Math.max(...receivers.map((r) => r.lastAt ?? 0));
  const seconds = (last - first) / 1000;
  return {
    label,
    endpoints: receivers.length,
    deliveries,
    seconds: Math.round(seconds * 100) / 100,
    deliveriesPerSecond: Math.round((deliveries - 1) / seconds),
  };
}

/** Several rounds of one run as one figure: all their deliveries over all their seconds. */
function combined(label: string, rounds: WebhookRate[]): WebhookRate {
  const deliveries = rounds.reduce((sum, r) => sum + r.deliveries, 0);
  const seconds = rounds.reduce((sum, r) => sum + r.seconds, 0);
  return {
    label,
    endpoints: rounds[0].endpoints,
    deliveries,
    seconds: Math.round(seconds * 100) / 100,
    deliveriesPerSecond: Math.round(deliveries / seconds),
    rounds: rounds.map((r) => r.deliveriesPerSecond),
  };
}

/** Leaves nothing of a run behind for the next one: its endpoints off, what still waits skipped. */
async function retire(sequelize: Sequelize, endpointIds: string[]): Promise<void> {
  const ids = `{${endpointIds.join(',')}}`;
  await sequelize.query(`UPDATE webhook_endpoints SET enabled = false WHERE id = ANY(CAST(:ids AS uuid[]))`, {
    replacements: { ids },
  });
  // Held ones are left to settle: the receivers count an answer a moment before the worker records it.
  await sequelize.query(
    `UPDATE webhook_deliveries SET status = 'skipped', due_at = NULL WHERE status = 'pending' AND locked_by IS NULL AND endpoint_id = ANY(CAST(:ids AS uuid[]))`,
    { replacements: { ids } },
  );
}

export async function runWebhookBench(options: {
  databaseUrl: string;
  deliveries: number;
  log: (message: string) => void;
}): Promise<WebhookBenchResults> {
  const { log, deliveries } = options;
  const date = new Date().toISOString();
  const load = () => loadavg().map((l) => Math.round(l * 100) / 100);
  const atStart = load();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-webhooks-'));
  const receivers: Receiver[] = [];
  let database: BenchDatabase | null = null;
  let pool: WorkerPool | null = null;
  try {
    log(`webhooks: creating a bench database on ${new URL(options.databaseUrl).host}`);
    database = await createBenchDatabase(options.databaseUrl, JWT_SECRET, dataDir);
    const { sequelize } = database.db;
    const { tenantId } = database;
    const config = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      WEBHOOKS_ALLOW_PRIVATE: 'true',
      LOG_LEVEL: 'warn',
    });
    const secrets = loadSecrets(dataDir, JWT_SECRET);
    const endpoint = (url: string) => createEndpoint(sequelize, tenantId, url, secrets.encryptionKey);

    for (let i = 0; i < 10; i++) receivers.push(await startReceiver());
    const slow = await startReceiver(SLOW_ANSWER_MS);
    receivers.push(slow);
    const deadUrl = `http://127.0.0.1:${await freePort()}/nothing-listens`;

    pool = await startWorkers({
      config,
      databaseUrl: database.url,
      secrets,
      log: pino({ level: 'warn' }),
      workers: DAEMON_WORKERS.filter((worker) => worker.name === 'webhook-worker'),
    });
    const timeoutMs = Math.max(120_000, deliveries * 20);

    log('webhooks: warm-up');
    const warm = [await endpoint(receivers[0].url)];
    await insertDeliveries(sequelize, tenantId, warm, Math.min(500, deliveries));
    await waitForCount([receivers[0]], Math.min(500, deliveries), timeoutMs);
    await retire(sequelize, warm);

    log(`webhooks: ${deliveries} deliveries to one endpoint`);
    receivers[0].reset();
    const one = [await endpoint(receivers[0].url)];
    await insertDeliveries(sequelize, tenantId, one, deliveries);
    await waitForCount([receivers[0]], deliveries, timeoutMs);
    const oneEndpoint = rateOf('one endpoint', [receivers[0]], deliveries);
    log(`  ${oneEndpoint.deliveriesPerSecond}/s (${oneEndpoint.seconds} s)`);
    await retire(sequelize, one);

    // The two runs the cost compares alternate (alone, beside, alone, beside) and each figure sums
    // both of its rounds, so load that comes and goes on a shared machine weighs on both alike.
    const healthy = receivers.slice(0, 10);
    const perEndpoint = Math.ceil(deliveries / 10);
    const alone: WebhookRate[] = [];
    const beside: WebhookRate[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      log(`webhooks: round ${round}/${ROUNDS}, ${perEndpoint * 10} deliveries over ten endpoints`);
      healthy.forEach((r) => r.reset());
      const ten = await Promise.all(healthy.map((r) => endpoint(r.url)));
      await insertDeliveries(sequelize, tenantId, ten, perEndpoint);
      await waitForCount(healthy, perEndpoint * 10, timeoutMs);
      alone.push(rateOf('ten endpoints', healthy, perEndpoint * 10));
      log(`  ${alone.at(-1)!.deliveriesPerSecond}/s (${alone.at(-1)!.seconds} s)`);
      await retire(sequelize, ten);

      log(
        `webhooks: round ${round}/${ROUNDS}, the same ten beside an endpoint answering in ${SLOW_ANSWER_MS / 1000} s and one refusing connections`,
      );
      healthy.forEach((r) => r.reset());
      slow.reset();
      const tenAgain = await Promise.all(healthy.map((r) => endpoint(r.url)));
      const troubled = [await endpoint(slow.url), await endpoint(deadUrl)];
      // The troubled endpoints' deliveries come first in due order: the worst case for the claim.
      await insertDeliveries(sequelize, tenantId, troubled, perEndpoint);
      await insertDeliveries(sequelize, tenantId, tenAgain, perEndpoint);
      await waitForCount(healthy, perEndpoint * 10, timeoutMs);
      beside.push(rateOf('ten endpoints beside a slow and a dead one', healthy, perEndpoint * 10));
      log(
        `  ${beside.at(-1)!.deliveriesPerSecond}/s (${beside.at(-1)!.seconds} s); the slow endpoint answered ${slow.count}`,
      );
      await retire(sequelize, [...tenAgain, ...troubled]);
    }
    const tenEndpoints = combined('ten endpoints', alone);
    const tenBesideSlowAndDead = combined('ten endpoints beside a slow and a dead one', beside);

    const cost =
      Math.round((1 - tenBesideSlowAndDead.deliveriesPerSecond / tenEndpoints.deliveriesPerSecond) * 1000) / 10;
    const goals = [
      {
        name: 'deliveries/s to one endpoint',
        value: oneEndpoint.deliveriesPerSecond,
        target: '≥ 500',
        met: oneEndpoint.deliveriesPerSecond >= 500,
      },
      {
        name: 'deliveries/s across ten endpoints',
        value: tenEndpoints.deliveriesPerSecond,
        target: '≥ 2000',
        met: tenEndpoints.deliveriesPerSecond >= 2000,
      },
      { name: 'cost of a slow and a dead endpoint to the others (%)', value: cost, target: '≤ 10', met: cost <= 10 },
    ];
    return {
      date,
      loadAverage: { atStart, atEnd: load() },
      deliveries,
      oneEndpoint,
      tenEndpoints,
      tenBesideSlowAndDead,
      costOfSlowAndDeadPercent: cost,
      goals,
    };
  } finally {
    await pool?.stop().catch(() => {});
    for (const receiver of receivers) await receiver.close().catch(() => {});
    if (database && process.env.BENCH_KEEP_DB !== '1')
      await database.drop().catch((error: Error) => log(`could not drop the bench database: ${error.message}`));
    else if (database) log(`kept the bench database: ${database.url}`);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function webhookTable(results: WebhookBenchResults): string {
  const rows = [results.oneEndpoint, results.tenEndpoints, results.tenBesideSlowAndDead].map(
    (rate) =>
      `| ${rate.label} | ${rate.deliveries} | ${rate.seconds} | ${rate.deliveriesPerSecond}${rate.rounds ? ` (rounds: ${rate.rounds.join(', ')})` : ''} |`,
  );
  const goals = results.goals.map(
    (goal) => `| ${goal.name} | ${goal.value} | ${goal.target} | ${goal.met ? 'met' : 'missed'} |`,
  );
  return [
    `load average ${results.loadAverage.atStart.join(' ')} at the start, ${results.loadAverage.atEnd.join(' ')} at the end`,
    '',
    '| webhook run | deliveries | seconds | deliveries/s |',
    '|---|---|---|---|',
    ...rows,
    '',
    '| goal | value | target | |',
    '|---|---|---|---|',
    ...goals,
  ].join('\n');
}

/** Runs the webhook benchmark, prints its table and writes bench/webhooks-results.json. */
export async function benchWebhooks(databaseUrl: string, log: (message: string) => void): Promise<WebhookBenchResults> {
  const raw = process.env.BENCH_WEBHOOKS;
  if (raw !== undefined && raw !== '' && !/^\d+$/.test(raw))
    throw new Error(`BENCH_WEBHOOKS must be a whole number, got "${raw}"`);
  const results = await runWebhookBench({ databaseUrl, deliveries: raw ? Number(raw) : 20_000, log });
  writeFileSync(resultsFile('webhooks-results.json'), JSON.stringify(results, null, 2) + '\n');
  console.log(webhookTable(results));
  const missed = results.goals.filter((goal) => !goal.met);
  if (missed.length)
    log(
      `webhook goals missed: ${missed.map((goal) => `${goal.name} = ${goal.value} (goal ${goal.target})`).join('; ')}`,
    );
  log('wrote bench/webhooks-results.json');
  return results;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    console.error(
      'npm run bench:webhooks needs a PostgreSQL server: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).',
    );
    process.exit(2);
  }
  const log = (message: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
  try {
    if (process.argv.includes('--e2e')) {
      const { benchWebhooksEndToEnd } = await import('./webhooks-e2e.ts');
      await benchWebhooksEndToEnd(databaseUrl, log);
    } else await benchWebhooks(databaseUrl, log);
  } catch (error) {
    process.exitCode = 1;
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
  }
}
