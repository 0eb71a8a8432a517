// `npm run bench:webhooks -- --e2e`: webhook events as users see them. `bench:webhooks` injects
// deliveries into their table; here the events come from sends. The daemon runs as in production
// (bench/run.ts's shape: an API node and a worker node, NODE_ENV=production, on PostgreSQL). The
// sends are accepted through the API while no worker node runs, then a worker node starts and drains
// them to the SMTP sink at full speed (as `npm run bench -- --drain` does), and local HTTP endpoints
// subscribed to email.sent receive the events the drain produces:
//
//   1. BENCH_WEBHOOK_SENDS (2,000) sends, one endpoint;
//   2. the same sends spread over ten endpoints (ten tenants, an endpoint and a tenth of the sends each).
//
// Lag = the event's arrival at its endpoint − its createdAt (the payload's, the events row's time):
// p50, p99 and max per run, beside the drain's rate (at the SMTP sink) and the deliveries' rate (at
// the endpoints) from the first arrival to the last, and how long after the last message the last
// event arrived. Goal (issue 27): p99 lag ≤ 1 s, deliveries keep pace with the drain.
// Writes bench/webhooks-e2e-results.json. Environment: DATABASE_URL (required), BENCH_WEBHOOK_SENDS.
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Sequelize } from 'sequelize';
import { loadSecrets } from '../daemon/secrets.ts';
import { seal } from '../daemon/crypto/sealed.ts';
import { generateWebhookSecret } from '../shared/webhooks.ts';
import { BENCH_DIR, startDaemonProcess, type Child } from './children.ts';
import { createBenchDatabase, seedBenchTenant, type BenchDatabase } from './database.ts';
import { enqueueSends } from './drain.ts';
import { startBenchSink, type BenchSink } from './sink.ts';

const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const WARM_UP_SENDS = 100;
const round = (value: number, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits;
const loadAverage = () => loadavg().map((l) => round(l, 2));

interface Endpoint {
  url: string;
  /** Lag of each event (by id: a redelivery counts once, at its first arrival), in ms. */
  lags: Map<string, number>;
  firstAt: number | null;
  lastAt: number | null;
  reset(): void;
  close(): Promise<void>;
}

async function startEndpoint(): Promise<Endpoint> {
  const endpoint: Endpoint = {
    url: '',
    lags: new Map(),
    firstAt: null,
    lastAt: null,
    reset() {
      endpoint.lags.clear();
      endpoint.firstAt = endpoint.lastAt = null;
    },
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const arrivedAt = Date.now();
      const now = performance.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; createdAt: string };
      if (!endpoint.lags.has(event.id)) endpoint.lags.set(event.id, arrivedAt - Date.parse(event.createdAt));
      endpoint.firstAt ??= now;
      endpoint.lastAt = now;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  endpoint.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return endpoint;
}

async function subscribe(sequelize: Sequelize, tenantId: string, url: string, encryptionKey: Buffer): Promise<void> {
  await sequelize.query(
    `INSERT INTO webhook_endpoints (tenant_id, url, events, secret_encrypted) VALUES (:tenantId, :url, ARRAY['email.sent'], :sealed)`,
    { replacements: { tenantId, url, sealed: seal(encryptionKey, generateWebhookSecret()) } },
  );
}

async function waitForEvents(endpoints: Endpoint[], expected: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const received = () => endpoints.reduce((sum, e) => sum + e.lags.size, 0);
  while (received() < expected) {
    if (Date.now() > deadline)
      throw new Error(`only ${received()} of ${expected} events arrived within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export interface EndToEndRun {
  label: string;
  endpoints: number;
  sends: number;
  lagMs: { p50: number; p99: number; max: number };
  /** Messages per second at the SMTP sink, first to last. */
  drainPerSecond: number;
  /** Events per second at the endpoints, first to last. */
  deliveriesPerSecond: number;
  /** How long after the last message reached the sink the last event reached its endpoint. */
  lastEventAfterLastMessageMs: number;
  loadAverage: number[];
}

async function measure(
  label: string,
  senders: Array<{ apiKey: string; sends: number }>,
  nodes: { api: string; startWorker(): Promise<Child> },
  sink: BenchSink,
  endpoints: Endpoint[],
): Promise<EndToEndRun> {
  const sends = senders.reduce((sum, sender) => sum + sender.sends, 0);
  sink.reset();
  endpoints.forEach((endpoint) => endpoint.reset());
  const connections = Math.max(2, Math.floor(32 / senders.length));
  await Promise.all(senders.map((sender) => enqueueSends(nodes.api, sender.apiKey, sender.sends, connections)));
  const worker = await nodes.startWorker();
  const timeoutMs = Math.max(120_000, sends * 30);
  try {
    await sink.waitForCount(sends, timeoutMs);
    await waitForEvents(endpoints, sends, timeoutMs);
  } finally {
    await worker.stop();
  }
  const lags = endpoints.flatMap((endpoint) => [...endpoint.lags.values()]).sort((a, b) => a - b);
  const first = Math.min(...endpoints.map((e) => e.firstAt ?? Infinity));
  const last = Math.max(...endpoints.map((e) => e.lastAt ?? 0));
  return {
    label,
    endpoints: endpoints.length,
    sends,
    lagMs: { p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags.at(-1)! },
    drainPerSecond: round((sends - 1) / ((sink.lastAt()! - sink.firstAt()!) / 1000)),
    deliveriesPerSecond: round((sends - 1) / ((last - first) / 1000)),
    lastEventAfterLastMessageMs: round(last - sink.lastAt()!),
    loadAverage: loadAverage(),
  };
}

export async function benchWebhooksEndToEnd(databaseUrl: string, log: (message: string) => void) {
  const raw = process.env.BENCH_WEBHOOK_SENDS;
  if (raw !== undefined && raw !== '' && !/^\d+$/.test(raw))
    throw new Error(`BENCH_WEBHOOK_SENDS must be a whole number, got "${raw}"`);
  const sends = raw ? Number(raw) : 2_000;
  const atStart = loadAverage();
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-bench-webhooks-e2e-'));
  const endpoints: Endpoint[] = [];
  const children: Child[] = [];
  let database: BenchDatabase | null = null;
  let sink: BenchSink | null = null;
  try {
    database = await createBenchDatabase(databaseUrl, JWT_SECRET, dataDir);
    const { sequelize } = database.db;
    const { encryptionKey } = loadSecrets(dataDir, JWT_SECRET);
    const tenants = [{ tenantId: database.tenantId, apiKey: database.apiKey }];
    for (let i = 1; i < 10; i++) tenants.push(await seedBenchTenant(sequelize, JWT_SECRET, dataDir, `Bench ${i}`));
    for (const tenant of tenants) {
      const endpoint = await startEndpoint();
      endpoints.push(endpoint);
      await subscribe(sequelize, tenant.tenantId, endpoint.url, encryptionKey);
    }
    sink = await startBenchSink();
    const daemon = async (role: 'api' | 'worker') => {
      const child = await startDaemonProcess(`daemon (ROLE=${role})`, {
        ROLE: role,
        DATA_DIR: dataDir,
        DATABASE_URL: database!.url,
        JWT_SECRET,
        SMTP_URL: `smtp://127.0.0.1:${sink!.port}`,
        REDIS_URL: '',
        // The endpoints listen on loopback, which production refuses by default.
        WEBHOOKS_ALLOW_PRIVATE: 'true',
      });
      children.push(child);
      return child;
    };
    const nodes = { api: (await daemon('api')).readyText, startWorker: () => daemon('worker') };

    log(`webhooks end to end: warm-up, ${WARM_UP_SENDS} sends`);
    await measure('warm-up', [{ apiKey: tenants[0].apiKey, sends: WARM_UP_SENDS }], nodes, sink, [endpoints[0]]);

    log(`webhooks end to end: ${sends} sends, one endpoint subscribed to email.sent`);
    const one = await measure('one endpoint', [{ apiKey: tenants[0].apiKey, sends }], nodes, sink, [endpoints[0]]);
    log(`  ${JSON.stringify(one)}`);
    const perTenant = Math.ceil(sends / 10);
    log(`webhooks end to end: ${perTenant * 10} sends spread over ten endpoints (ten tenants)`);
    const ten = await measure(
      'ten endpoints',
      tenants.map((tenant) => ({ apiKey: tenant.apiKey, sends: perTenant })),
      nodes,
      sink,
      endpoints,
    );
    log(`  ${JSON.stringify(ten)}`);

    const runs = [one, ten];
    const goals = runs.flatMap((run) => [
      { name: `p99 lag, ${run.label} (ms)`, value: run.lagMs.p99, target: '≤ 1000', met: run.lagMs.p99 <= 1000 },
      {
        name: `deliveries keep pace with the drain, ${run.label} (events/s vs messages/s)`,
        value: run.deliveriesPerSecond,
        target: `≥ ${run.drainPerSecond} × 0.95`,
        met: run.deliveriesPerSecond >= run.drainPerSecond * 0.95,
      },
    ]);
    const results = {
      date: new Date().toISOString(),
      loadAverage: { atStart, atEnd: loadAverage() },
      runs,
      goals,
    };
    writeFileSync(join(BENCH_DIR, 'webhooks-e2e-results.json'), JSON.stringify(results, null, 2) + '\n');
    console.log(
      [
        `load average ${atStart.join(' ')} at the start, ${results.loadAverage.atEnd.join(' ')} at the end`,
        '',
        '| run | sends | lag p50 ms | lag p99 ms | lag max ms | drain msg/s | events/s | last event after last message ms |',
        '|---|---|---|---|---|---|---|---|',
        ...runs.map(
          (run) =>
            `| ${run.label} | ${run.sends} | ${run.lagMs.p50} | ${run.lagMs.p99} | ${run.lagMs.max} | ${run.drainPerSecond} | ${run.deliveriesPerSecond} | ${run.lastEventAfterLastMessageMs} |`,
        ),
        '',
        ...goals.map((goal) => `${goal.met ? 'met   ' : 'MISSED'} ${goal.name}: ${goal.value} (goal ${goal.target})`),
      ].join('\n'),
    );
    log('wrote bench/webhooks-e2e-results.json');
    return results;
  } finally {
    for (const child of children) await child.stop().catch(() => {});
    for (const endpoint of endpoints) await endpoint.close().catch(() => {});
    await sink?.close().catch(() => {});
    if (database)
      await database.drop().catch((error: Error) => log(`could not drop the bench database: ${error.message}`));
    rmSync(dataDir, { recursive: true, force: true });
  }
}
