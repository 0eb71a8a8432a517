// The svc columns of `npm run bench:mta`: the daemon as production runs it (NODE_ENV=production), an
// API node and a worker node (ROLE=worker) on the bench database, rate limits in Redis, DELIVERY=direct
// with DNS_SERVERS pointing at the bench DNS server, the verified sending domain's DKIM key (the send
// worker signs each message). The batch-API column posts POST /emails/batch (100 recipients a
// request); the submission column adds an SMTP edge node (ROLE=smtp, the STARTTLS submission port
// with the bench's pair) fed whole unsigned messages by the SMTP injector the peers get.
import { loadavg } from 'node:os';
import { QueryTypes, type Sequelize } from 'sequelize';
import { cpuTimeMs, freePort, startDaemonProcess, type Child } from './children.ts';
import { columnFigures, type ColumnFigures, type SinksClient } from './mta-figures.ts';
import { injectApi, injectSmtp, type Injection } from './mta-inject.ts';
import type { PresignedMessage } from './mta-message.ts';
import type { BenchTls } from './mta-tls.ts';
import type { SinkStats } from './mta-sinks.ts';

export interface SvcSetup {
  databaseUrl: string;
  dataDir: string;
  jwtSecret: string;
  redisUrl: string;
  dnsServer: string;
  apiKey: string;
  retryBaseMs: number;
  logLevel: string;
  /** Extra node flags for every node (BENCH_CPU_PROF). */
  nodeArgs: string[];
  /** Given: an SMTP edge node (ROLE=smtp) offers submission with this pair. */
  submissionTls: BenchTls | null;
  /**
   * `all` (BENCH_SUBMISSION_ROLE=all, with --only submission): one node, ROLE=all, is the SMTP edge, the
   * API and the worker, as a one-box install runs it; its edge hands each spooled message to its MTA
   * thread in memory. `smtp` (the default): an SMTP edge node beside the API and worker nodes.
   */
  submissionRole?: 'smtp' | 'all';
  log(message: string): void;
}

export interface SvcNodes {
  api: Child;
  worker: Child;
  /** The SMTP edge node and its STARTTLS submission port, when asked for. */
  smtp: { node: Child; port: number } | null;
  url: string;
  stop(): Promise<void>;
}

const loadAverage = () => loadavg().map((l) => Math.round(l * 100) / 100);

/** One node as an operator starts it: bin/svc.js daemon start, the compiled build. */
export function startSvcNode(
  setup: SvcSetup,
  role: 'api' | 'worker' | 'smtp' | 'all',
  extra: Record<string, string> = {},
): Promise<Child> {
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
      ...extra,
    },
    { nodeArgs: setup.nodeArgs },
  );
}

export async function startSvcNodes(setup: SvcSetup): Promise<SvcNodes> {
  const start = (role: 'api' | 'worker' | 'smtp' | 'all', extra: Record<string, string> = {}) =>
    startSvcNode(setup, role, extra);
  const submissionEnv = async (tls: BenchTls) => {
    const port = await freePort();
    const env = {
      SMTP_SUBMISSION_PORT: String(port),
      SMTP_SUBMISSION_HOST: '127.0.0.1',
      SMTP_SUBMISSION_TLS_CERT: tls.certFile,
      SMTP_SUBMISSION_TLS_KEY: tls.keyFile,
    };
    return { port, env };
  };
  if (setup.submissionRole === 'all') {
    if (!setup.submissionTls) throw new Error('BENCH_SUBMISSION_ROLE=all is for the submission column');
    const { port, env } = await submissionEnv(setup.submissionTls);
    const node = await start('all', env);
    return { api: node, worker: node, smtp: { node, port }, url: node.readyText, stop: () => node.stop() };
  }
  const api = await start('api');
  const worker = await start('worker');
  let smtp: SvcNodes['smtp'] = null;
  if (setup.submissionTls) {
    const { port, env } = await submissionEnv(setup.submissionTls);
    smtp = { node: await start('smtp', env), port };
  }
  return {
    api,
    worker,
    smtp,
    url: api.readyText,
    async stop() {
      await Promise.all([api.stop(), worker.stop(), smtp?.node.stop()]);
    },
  };
}

/** CPU so far (ms) of each PostgreSQL backend connected to the bench database, but this one. */
async function postgresCpu(sequelize: Sequelize): Promise<Map<number, number>> {
  const rows = await sequelize.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    { type: QueryTypes.SELECT },
  );
  const cpu = new Map<number, number>();
  for (const { pid } of rows) {
    const ms = cpuTimeMs(pid);
    if (ms !== null) cpu.set(pid, ms);
  }
  return cpu;
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
  setup.log(`${label}: ${count} messages through POST /emails/batch`);
  return measured(label, count, [nodes.api, nodes.worker], sinks, setup, sequelize, stallMs, () =>
    injectApi(nodes.url, setup.apiKey, run, count),
  );
}

/** svc's Message-ID for a submission, from `250 … queued as <email id>` (emails/service.ts messageIdFor). */
function submittedMessageId(response: string, message: PresignedMessage): string {
  const id = /queued as (\S+)/.exec(response)?.[1];
  if (!id) throw new Error(`svc's submission answered without an email id: ${response}`);
  return `<${id}@${/@([^>]+)>$/.exec(message.messageId)?.[1] ?? 'localhost'}>`;
}

/**
 * One svc run of whole messages over SMTP submission (STARTTLS, AUTH PLAIN with the bench's API key),
 * by the injector and with the messages the peers get; svc signs each one.
 */
export async function svcSubmissionColumn(
  label: string,
  messages: PresignedMessage[],
  nodes: SvcNodes,
  sinks: SinksClient,
  setup: SvcSetup,
  sequelize: Sequelize,
  stallMs: number,
): Promise<ColumnFigures> {
  if (!nodes.smtp) throw new Error('the submission column needs the SMTP edge node (setup.submissionTls)');
  const port = nodes.smtp.port;
  setup.log(`${label}: ${messages.length} unsigned messages over SMTP submission`);
  // One node with BENCH_SUBMISSION_ROLE=all: its CPU counted once.
  const busy = [...new Set([nodes.smtp.node, nodes.worker])];
  return measured(label, messages.length, busy, sinks, setup, sequelize, stallMs, () =>
    injectSmtp(port, messages, { auth: { user: 'svc', pass: setup.apiKey }, messageIdOf: submittedMessageId }),
  );
}

/**
 * Injects, waits for the sinks, and gives the figures with the CPU the busy nodes spent per message.
 * `during` sees the sinks' counts while the run goes (bench/mta-nodes.ts kills a node there).
 */
export async function measured(
  label: string,
  count: number,
  busy: Child[],
  sinks: SinksClient,
  setup: SvcSetup,
  sequelize: Sequelize,
  stallMs: number,
  inject: () => Promise<Injection>,
  during?: (stats: SinkStats) => void,
): Promise<ColumnFigures> {
  await sinks.reset();
  const loadAverageBefore = loadAverage();
  const pids = busy.map((child) => child.process.pid!);
  const cpuBefore = pids.map(cpuTimeMs);
  const postgresBefore = await postgresCpu(sequelize);
  const injection = await inject();
  setup.log(`  accepted in ${Math.round(injection.finishedAt - injection.startedAt)} ms; waiting for the sinks`);
  if (injection.failures) setup.log(`  ${injection.failures} refused, the first: ${injection.firstError}`);
  const stats = await sinks.waitForUnique(
    count - injection.failures,
    stallMs,
    (s) => setup.log(`  ${s.unique} received`),
    during,
  );
  const cpuAfter = pids.map(cpuTimeMs);
  const postgresAfter = await postgresCpu(sequelize);
  const perMessage = (ms: number) => Math.round((ms / count) * 100) / 100;
  const byNode =
    cpuBefore.every((v) => v !== null) && cpuAfter.every((v) => v !== null)
      ? cpuAfter.map((v, i) => perMessage(v! - cpuBefore[i]!))
      : null;
  // A backend that started during the column counts from zero; one that ended during it is lost.
  let postgresMs = 0;
  for (const [pid, ms] of postgresAfter) postgresMs += ms - (postgresBefore.get(pid) ?? 0);
  const postgresPerMessage = postgresAfter.size > 0 ? perMessage(postgresMs) : null;
  const arrivals = await sinks.arrivals();
  const figures = columnFigures(label, null, injection, stats, arrivals, {
    cpuMsPerMessage:
      byNode === null ? null : perMessage(cpuAfter.reduce<number>((sum, v, i) => sum + v! - cpuBefore[i]!, 0)),
    cpuMsPerMessageByNode: byNode,
    postgresCpuMsPerMessage: postgresPerMessage,
    loadAverageBefore,
    loadAverageAfter: loadAverage(),
    notes: injection.failures ? [`${injection.failures} refused (${injection.firstError ?? 'by the API'})`] : [],
  });
  setup.log(
    `  CPU per message: nodes ${figures.cpuMsPerMessage} ms (${byNode?.join(' + ')}), PostgreSQL backends ${postgresPerMessage} ms`,
  );
  await settled(sequelize);
  return figures;
}
