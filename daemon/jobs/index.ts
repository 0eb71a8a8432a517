// Starts the long-lived worker threads with Bree: send-worker, scheduler, webhook-worker,
// system-mail-worker, maintenance and campaign-worker, each in its own thread (WORKER_THREADS=separate) or all but the
// send worker sharing one (shared, the default). A thread that dies is started again; stop() lets
// each thread drain and give back its leases before it ends.
import { errorText } from '../errors.ts';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import Bree from 'bree';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Secrets } from '../secrets.ts';
import { withOldGenerationFloor } from './old-generation-floor.ts';
import type { ParentMessage, ThreadMessage, ThreadStartData } from './thread.ts';
import { CAMPAIGN_TUNING, configuredLease, DEFAULT_TUNING, sendWorkerTuning, type QueueTuning } from './tuning.ts';

export type { QueueTuning } from './tuning.ts';

export interface WorkerPool {
  alive(): boolean;
  names(): string[];
  stop(): Promise<void>;
}

export interface WorkerDefinition {
  name: string;
  /** Absolute path of the worker's .ts module (it calls runWorkerThread). */
  module: string;
  options?: Record<string, unknown>;
  /** Worker loops in this thread (default 1). */
  loops?: number;
  /** This worker's own tuning over the defaults (a caller's explicit `tuning` still wins). */
  tuning?: (config: Config) => Partial<QueueTuning>;
  /** Settings this thread runs with instead of the node's (its share of the node's SMTP pool). */
  config?: Partial<Config>;
  /** V8 young generation of this thread in MB (default WORKER_YOUNG_GENERATION_MB). */
  youngGenerationMb?: number;
}

export interface StartWorkersOptions {
  config: Config;
  /**
   * The database the threads use. A promise starts the threads at once, to load their modules while
   * the caller opens and migrates the database; they connect when it resolves (docs/boot.md).
   */
  databaseUrl: string | Promise<string>;
  secrets: Secrets;
  log: Logger;
  /** Defaults to the daemon's four workers; tests run their own. */
  workers?: WorkerDefinition[];
  tuning?: Partial<QueueTuning>;
  /** How long to wait for every thread to connect before answering anyway. */
  readyTimeoutMs?: number;
}

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const BOOTSTRAP = here('./bootstrap.mjs');
const RESTART_DELAY_MS = 1_000;
/** A worker thread's V8 young generation: the default grows to 16+ MB per thread; queue loops allocate little. */
const WORKER_YOUNG_GENERATION_MB = 4;
/**
 * The send worker is the one thread that allocates heavily (MIME trees, DKIM canonicalisation, a
 * message's buffers): with 4 MB it spent ~18 % of its time in scavenges under drain (bench/, docs/drain.md).
 * At 16 MB a 100 KB message still filled the nursery every few dozen messages and each scavenge copied
 * the messages in flight; at 64 MB bench:mta delivered 221 msg/s against 192 (two runs against three,
 * docs/mta.md). The nursery grows to this only under such load; an idle thread's stays small.
 */
const SEND_WORKER_YOUNG_GENERATION_MB = 64;

const SEND_WORKER: WorkerDefinition = {
  name: 'send-worker',
  module: here('./send-worker.ts'),
  tuning: sendWorkerTuning,
  youngGenerationMb: SEND_WORKER_YOUNG_GENERATION_MB,
};

/**
 * DELIVERY=direct: the outbound MTA's loop, one thread per node (its per-destination connection
 * limits hold per thread, and one loop per node keeps them what the operator set).
 */
export const MTA_WORKER: WorkerDefinition = {
  name: 'mta-worker',
  module: here('./mta-worker.ts'),
  // Its statements are few per batch (claim, extend, one commit); its sockets and TLS allocate. A 20 s
  // lease (extended every third of it while a row is held): a node killed mid-run leaves its rows to the
  // other nodes after 20 s rather than a minute (docs/mta.md "Several worker nodes").
  tuning: () => ({ concurrency: 4, leaseMs: 20_000 }),
  youngGenerationMb: SEND_WORKER_YOUNG_GENERATION_MB,
};

/** WORKER_THREADS=separate: a thread per worker. */
export const DAEMON_WORKERS: WorkerDefinition[] = [
  SEND_WORKER,
  { name: 'scheduler', module: here('./scheduler.ts') },
  { name: 'webhook-worker', module: here('./webhook-worker.ts') },
  { name: 'system-mail-worker', module: here('./system-mail-worker.ts') },
  { name: 'maintenance', module: here('./maintenance.ts') },
  // A few campaigns expand at once; a shorter lease, so a campaign whose worker died resumes soon.
  { name: 'campaign-worker', module: here('./campaign-worker.ts'), tuning: () => CAMPAIGN_TUNING },
];

/** WORKER_THREADS=shared (default): the send worker, and one thread for all the others (background.ts). */
export const SHARED_DAEMON_WORKERS: WorkerDefinition[] = [
  SEND_WORKER,
  { name: 'background', module: here('./background.ts'), loops: 5 },
];

/**
 * A node's SMTP_MAX_CONNECTIONS shared out between its `threads` send threads (each has its own pools):
 * the shares add up to what the operator set, as one thread's pool did; with more threads than
 * connections each thread still gets one (a thread without a connection could send nothing).
 */
export function smtpConnectionShares(connections: number, threads: number): number[] {
  return Array.from({ length: threads }, (_, index) =>
    Math.max(1, Math.floor(connections / threads) + (index < connections % threads ? 1 : 0)),
  );
}

/**
 * SEND_THREADS send-worker threads, each claiming from the same queue (SKIP LOCKED keeps them apart, as
 * it does two nodes), each with its share of the node's SMTP connections. Each keeps the concurrency
 * (and claim size) of the node's whole pool: sized by its share, claims and records shrank and the
 * statements per message went from 0.21 to 0.36 (bench --drain); those beyond its connections wait in
 * its pool's queue. One send thread left a 2-core worker node ~30 % of a core idle (issue 27 §3).
 */
function sendWorkers(config: Pick<Config, 'sendThreads' | 'smtpMaxConnections'>): WorkerDefinition[] {
  if (config.sendThreads === 1) return [SEND_WORKER];
  return smtpConnectionShares(config.smtpMaxConnections, config.sendThreads).map((smtpMaxConnections, index) => ({
    ...SEND_WORKER,
    name: index === 0 ? SEND_WORKER.name : `${SEND_WORKER.name}-${index + 1}`,
    config: { smtpMaxConnections },
    tuning: () => sendWorkerTuning(config),
  }));
}

export function daemonWorkers(
  config: Pick<Config, 'workerThreads' | 'sendThreads' | 'smtpMaxConnections' | 'delivery'>,
): WorkerDefinition[] {
  const base = config.workerThreads === 'separate' ? DAEMON_WORKERS : SHARED_DAEMON_WORKERS;
  const others = base.filter((definition) => definition !== SEND_WORKER);
  const mta = config.delivery === 'direct' ? [MTA_WORKER] : [];
  return [...sendWorkers(config), ...others, ...mta];
}

/**
 * A thread's tuning: the defaults, its worker's own, JOB_LEASE_MS over every lease when set, and what the
 * caller of startWorkers asked for (tests) last.
 */
export function workerTuning(
  definition: WorkerDefinition,
  config: Config,
  overrides: Partial<QueueTuning> = {},
): QueueTuning {
  return {
    ...DEFAULT_TUNING,
    ...definition.tuning?.(config),
    ...configuredLease(config),
    ...overrides,
  };
}

export async function startWorkers(options: StartWorkersOptions): Promise<WorkerPool> {
  const { log } = options;
  const definitions = options.workers ?? daemonWorkers(options.config);
  const tuning: QueueTuning = { ...DEFAULT_TUNING, ...options.tuning };
  const knownUrl = typeof options.databaseUrl === 'string' ? options.databaseUrl : null;
  // The URL is awaited once the threads have started (below): a boot that fails before that (the database
  // did not open while a loaded machine was still starting threads) must not count as an unhandled
  // rejection meanwhile, which would end the process instead of rejecting here.
  if (typeof options.databaseUrl !== 'string') options.databaseUrl.catch(() => undefined);
  const threadData = (definition: WorkerDefinition): ThreadStartData => {
    const config = { ...options.config, ...definition.config };
    return {
      name: definition.name,
      module: pathToFileURL(definition.module).href,
      config,
      databaseUrl: knownUrl,
      secrets: {
        jwtSecret: options.secrets.jwtSecret,
        encryptionKey: new Uint8Array(options.secrets.encryptionKey),
        linkSigningKey: new Uint8Array(options.secrets.linkSigningKey),
        keyCheck: options.secrets.keyCheck,
      },
      tuning: workerTuning(definition, config, options.tuning),
      loops: definition.loops ?? 1,
      options: definition.options ?? {},
    };
  };

  const ready = new Set<string>();
  const readyWaiters = new Set<() => void>();
  let stopping = false;

  const bree = new Bree({
    root: false,
    doRootCheck: false,
    // Bree's own chatter (online, exited) goes to debug; failures are logged by the handlers below.
    logger: {
      info: (message: unknown) => log.debug({ bree: String(message) }),
      warn: (message: unknown) => log.warn({ bree: String(message) }),
      error: (message: unknown) => log.debug({ bree: String(message) }),
    } as unknown as Bree.BreeLogger,
    jobs: definitions.map((definition) => ({
      name: definition.name,
      path: BOOTSTRAP,
      worker: {
        workerData: threadData(definition),
        resourceLimits: { maxYoungGenerationSizeMb: definition.youngGenerationMb ?? WORKER_YOUNG_GENERATION_MB },
      },
    })),
    errorHandler: (error, meta) => {
      if (!stopping) log.error({ worker: meta.name, err: errorText(error) }, 'worker thread error');
    },
    workerMessageHandler: ({ name, message }) => {
      const data = message as ThreadMessage;
      if (typeof data === 'object' && data.type === 'ready') {
        ready.add(name);
        for (const notify of readyWaiters) notify();
      }
    },
  });

  // Threads are created with a floor under their old generation's GC limit (old-generation-floor.ts).
  const watchCreated = (onCreated: (worker: Worker) => void) => {
    const listener = (name: string) => {
      const worker = bree.workers.get(name);
      if (worker) onCreated(worker);
    };
    bree.on('worker created', listener);
    return () => void bree.off('worker created', listener);
  };

  bree.on('worker deleted', (name: string) => {
    ready.delete(name);
    if (stopping) return;
    log.error({ worker: name }, `worker thread ${name} stopped unexpectedly; starting it again`);
    setTimeout(() => {
      if (!stopping)
        withOldGenerationFloor(() => bree.run(name), watchCreated).catch((error: Error) =>
          log.error({ worker: name, err: error.message }, 'could not restart worker thread'),
        );
    }, RESTART_DELAY_MS).unref();
  });

  // run() validates the job list on its first call, then starts every thread.
  await withOldGenerationFloor(() => bree.run(), watchCreated);
  if (knownUrl === null) {
    let url: string;
    try {
      url = await options.databaseUrl;
    } catch (error) {
      // The caller's boot failed: the threads, still waiting for a database, end at 'cancel'.
      stopping = true;
      await bree.stop();
      throw error;
    }
    // Threads started again later (after a crash) are given the URL at start; the running ones now.
    for (const job of bree.config.jobs as Array<{ worker: { workerData: ThreadStartData } }>)
      job.worker.workerData.databaseUrl = url;
    for (const worker of bree.workers.values()) worker.postMessage({ type: 'database', url } satisfies ParentMessage);
  }
  const names = definitions.map((definition) => definition.name);
  const allReady = () => names.every((name) => ready.has(name));
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      log.warn({ waiting: names.filter((name) => !ready.has(name)) }, 'worker threads are slow to start');
      finish();
    }, options.readyTimeoutMs ?? 60_000);
    function finish() {
      clearTimeout(timer);
      readyWaiters.delete(check);
      resolve();
    }
    function check() {
      if (allReady()) finish();
    }
    readyWaiters.add(check);
    check();
  });
  log.info({ workers: names }, 'worker threads started');

  return {
    alive: () => !stopping && allReady(),
    names: () => [...names],
    async stop() {
      if (stopping) return;
      stopping = true;
      // Each thread stops claiming, waits for its in-flight jobs (bounded by drainTimeoutMs),
      // releases its leases and says 'done'; a thread that does not is terminated.
      const graceMs = tuning.drainTimeoutMs + 5_000;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
      const result = await Promise.race([bree.stop(), timedOut]);
      clearTimeout(timer);
      if (result === 'timeout') {
        const stuck = [...bree.workers.entries()];
        log.warn({ workers: stuck.map(([name]) => name) }, 'worker threads did not stop in time; terminating them');
        await Promise.all(stuck.map(([, worker]) => worker.terminate()));
      }
    },
  };
}
