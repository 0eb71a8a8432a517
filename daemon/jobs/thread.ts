// What every worker thread shares: reading workerData, its own database connection, a logger, its
// own mail resources (mail/resources.ts: DKIM key cache, relay pools, render sandbox), and the
// shutdown handshake with the pool (the pool posts 'cancel'; the thread drains, gives back its
// leases, closes, and answers 'done').
import { errorText } from '../errors.ts';
import { hostname } from 'node:os';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import pino from 'pino';
import type { Config } from '../config.ts';
import { connectSequelize } from '../db/index.ts';
import { initModels } from '../modules/models.ts';
import { createSql } from '../db/sql.ts';
import { closeMailResources } from '../mail/resources.ts';
import { createMailResources } from '../modules/mail-resources.ts';
import { releaseJobs } from '../queue/claim.ts';
import type { WorkerContext } from '../mail/worker-context.ts';
import type { QueueTuning } from './tuning.ts';
import { onAbort } from '../queue/wake.ts';
import { createMetricsReporter, type MetricsReporter } from '../modules/metrics/reporter.ts';

/** What the pool hands a thread. Plain data only: it crosses the thread boundary by copy. */
export interface ThreadData {
  name: string;
  module: string;
  config: Config;
  databaseUrl: string;
  secrets: { jwtSecret: string; encryptionKey: Uint8Array; linkSigningKey: Uint8Array; keyCheck: string };
  tuning: QueueTuning;
  /** How many worker loops this thread runs (1, or 3 for the shared background thread). */
  loops: number;
  /** Worker-specific settings (a test worker's queue, for example). */
  options: Record<string, unknown>;
}

export interface ThreadRuntime {
  data: ThreadData;
  ctx: WorkerContext;
  tuning: QueueTuning;
  /** Aborted when the pool asks the thread to stop claiming. */
  signal: AbortSignal;
  /** The embedded PGlite does not deliver NOTIFY across connections: poll it instead. */
  embedded: boolean;
  /** What this thread counts for its node's /metrics (modules/metrics/reporter.ts). */
  metrics: MetricsReporter;
}

export type ThreadMessage = { type: 'ready' } | 'done';

/**
 * What a thread is started with: the daemon starts its threads before its database is open (they load
 * their modules meanwhile, docs/boot.md), with no URL; the URL follows as a message once the
 * migrations have run. A thread started again later is given it at once.
 */
export type ThreadStartData = Omit<ThreadData, 'databaseUrl'> & { databaseUrl: string | null };
/** The parent's messages to a thread: the database is ready at this URL; stop. */
export type ParentMessage = { type: 'database'; url: string } | 'cancel';

export async function runWorkerThread(body: (runtime: ThreadRuntime) => Promise<void>): Promise<void> {
  if (!parentPort) throw new Error('runWorkerThread must run inside a worker thread');
  const port = parentPort;
  const started = workerData as ThreadStartData;
  const log = pino({ level: started.config.logLevel, base: { worker: started.name } });
  const workerId = `${hostname()}:${process.pid}:${started.name}:${threadId}`;
  const stop = new AbortController();
  let databaseReady: (url: string) => void = () => {};
  const databaseUrl = new Promise<string>((resolve) => (databaseReady = resolve));
  port.on('message', (message: ParentMessage) => {
    if (message === 'cancel') stop.abort();
    else if (message.type === 'database') databaseReady(message.url);
  });
  if (started.databaseUrl !== null) databaseReady(started.databaseUrl);
  // Stopped before the database was ready (its boot failed): nothing was opened, nothing to release.
  const url = await Promise.race([
    databaseUrl,
    new Promise<null>((resolve) => onAbort(stop.signal, () => resolve(null))),
  ]);
  if (url === null) {
    port.postMessage('done' satisfies ThreadMessage);
    return;
  }
  const data: ThreadData = { ...started, databaseUrl: url };

  // A shared thread runs several loops, each up to `concurrency` jobs at once: size the pools for all.
  const connections = data.tuning.concurrency * data.loops + 2;
  const sequelize = connectSequelize(data.databaseUrl, connections);
  initModels(sequelize);
  const sql = createSql(data.databaseUrl, { max: connections, embedded: data.config.databaseUrl === null });
  const secrets = {
    jwtSecret: data.secrets.jwtSecret,
    encryptionKey: Buffer.from(data.secrets.encryptionKey),
    linkSigningKey: Buffer.from(data.secrets.linkSigningKey),
    keyCheck: data.secrets.keyCheck,
  };
  const ctx: WorkerContext = {
    config: data.config,
    secrets,
    ...createMailResources(data.config, secrets, sequelize, undefined, log),
    sequelize,
    sql,
    log,
    workerId,
  };
  const metrics = createMetricsReporter();
  try {
    await sequelize.authenticate();
    port.postMessage({ type: 'ready' } satisfies ThreadMessage);
    await body({
      data,
      ctx,
      tuning: data.tuning,
      signal: stop.signal,
      embedded: data.config.databaseUrl === null,
      metrics,
    });
    metrics.close();
    const released = await releaseJobs(sequelize, workerId);
    if (released > 0) log.warn({ released }, 'released the leases of jobs still running at shutdown');
    await closeMailResources(ctx);
    await sql.close();
    await sequelize.close();
    port.postMessage('done' satisfies ThreadMessage);
  } catch (error) {
    // The pool sees the thread exit and starts a new one; leases held now expire and are reclaimed.
    log.error({ err: errorText(error) }, 'worker thread failed');
    await closeMailResources(ctx).catch(() => {});
    await sql.close().catch(() => {});
    await sequelize.close().catch(() => {});
    process.exit(1);
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    const unregister = signal ? onAbort(signal, done) : () => {};
    function done() {
      clearTimeout(timer);
      unregister();
      resolve();
    }
  });
}
