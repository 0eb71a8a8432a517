// The svc column of `npm run bench:mta`: the daemon as production runs it (NODE_ENV=production), an
// API node and a worker node (ROLE=worker) on the bench database, rate limits in Redis, DELIVERY=direct
// with DNS_SERVERS pointing at the bench DNS server, the verified sending domain's DKIM key (the send
// worker signs each message). One injector posts POST /emails/batch (100 recipients a request).
import { loadavg } from 'node:os';
import { QueryTypes, type Sequelize } from 'sequelize';
import { cpuTimeMs, startDaemonProcess, type Child } from './children.ts';
import { columnFigures, type ColumnFigures, type SinksClient } from './mta-figures.ts';
import { injectApi } from './mta-inject.ts';

export interface SvcSetup {
  databaseUrl: string;
  dataDir: string;
  jwtSecret: string;
  redisUrl: string;
  dnsServer: string;
  apiKey: string;
  retryBaseMs: number;
  logLevel: string;
  /** Extra node flags for both nodes (BENCH_CPU_PROF). */
  nodeArgs: string[];
  log(message: string): void;
}

export interface SvcNodes {
  api: Child;
  worker: Child;
  url: string;
  stop(): Promise<void>;
}

const loadAverage = () => loadavg().map((l) => Math.round(l * 100) / 100);

export async function startSvcNodes(setup: SvcSetup): Promise<SvcNodes> {
  const start = async (role: 'api' | 'worker') => {
    // As an operator starts it: bin/svc.js daemon start, the compiled build.
    return startDaemonProcess(
      `svc daemon (ROLE=${role})`,
      {
        ROLE: role,
        DATA_DIR: setup.dataDir,
        DATABASE_URL: setup.databaseUrl,
        JWT_SECRET: setup.jwtSecret,
        REDIS_URL: setup.redisUrl,
        DELIVERY: 'direct',
        DNS_SERVERS: setup.dnsServer,
        EHLO_NAME: 'mta.bench.example',
        SEND_RETRY_BASE_MS: String(setup.retryBaseMs),
        LOG_LEVEL: setup.logLevel,
        SMTP_URL: '',
      },
      { nodeArgs: setup.nodeArgs },
    );
  };
  const api = await start('api');
  const worker = await start('worker');
  return {
    api,
    worker,
    url: api.readyText,
    async stop() {
      await Promise.all([api.stop(), worker.stop()]);
    },
  };
}

/** Waits until the spool and the send queue are empty (the last outcomes committed). */
async function settled(sequelize: Sequelize): Promise<void> {
  for (;;) {
    const [row] = await sequelize.query<{ n: number }>(
      `SELECT (SELECT count(*) FROM mta_spool) + (SELECT count(*) FROM jobs WHERE queue = 'send')::int AS n`,
      { type: QueryTypes.SELECT },
    );
    if (Number(row.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** One svc run of `count` messages to the sinks as they behave now; `run` prefixes the recipients. */
export async function svcColumn(
  label: string,
  run: string,
  count: number,
  nodes: SvcNodes,
  sinks: SinksClient,
  setup: SvcSetup,
  sequelize: Sequelize,
  stallMs: number,
): Promise<ColumnFigures> {
  await sinks.reset();
  const loadAverageBefore = loadAverage();
  const pids = [nodes.api.process.pid!, nodes.worker.process.pid!];
  const cpuBefore = pids.map(cpuTimeMs);
  setup.log(`${label}: ${count} messages through POST /emails/batch`);
  const injecting = injectApi(nodes.url, setup.apiKey, run, count);
  // The sinks are watched while the injector runs: an injection error surfaces at once.
  const injection = await injecting;
  setup.log(`  accepted in ${Math.round(injection.finishedAt - injection.startedAt)} ms; waiting for the sinks`);
  const stats = await sinks.waitForUnique(count, stallMs, (s) => setup.log(`  ${s.unique} received`));
  const cpuAfter = pids.map(cpuTimeMs);
  const cpu =
    cpuBefore.every((v) => v !== null) && cpuAfter.every((v) => v !== null)
      ? cpuAfter.reduce((sum, v, i) => sum + v! - cpuBefore[i]!, 0)
      : null;
  const arrivals = await sinks.arrivals();
  const figures = columnFigures(label, null, injection, stats, arrivals, {
    cpuMsPerMessage: cpu === null ? null : Math.round((cpu / count) * 100) / 100,
    loadAverageBefore,
    loadAverageAfter: loadAverage(),
    notes: injection.failures ? [`${injection.failures} recipients rejected by the API`] : [],
  });
  await settled(sequelize);
  return figures;
}
