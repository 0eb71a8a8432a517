// Boot order: config → secrets → worker threads start loading (role worker|all) → database
// (embedded or external) → migrations → Redis → the threads connect, beside app.listen (role
// api|all) → SMTP edge (role smtp|all, when a port is set). SIGTERM/SIGINT drain and stop.
import { errorText } from './errors.ts';
import { Redis } from 'ioredis';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { openDatabase, redactUrl, type Database } from './db/index.ts';
import { migrateUp } from './db/migrate.ts';

import { readTlsPair, reloadTlsOnHangup } from './tls.ts';
import { registerNode, type NodeRegistration } from './db/nodes.ts';
import { checkSecretAgainstDatabase, loadSecrets } from './secrets.ts';
import { buildApp, metricsOf, REDACTED_LOG_PATHS } from './app.ts';
import { startMetricsListener, type MetricsListener } from './modules/metrics/listener.ts';
import { startWorkers, type WorkerPool } from './jobs/index.ts';
import { initModels } from './modules/models.ts';
import { smtpEdgeConfigured, startSmtpEdge, type SmtpEdge } from './smtp/edge.ts';
import type { App, AppDeps } from './app-types.ts';
import { DkimSigningCache } from './modules/domains/signing.ts';
import { assertPortFree, createDaemonLogger } from './logging.ts';
import { createDnsClient } from './mta/dns-query.ts';
import { ehloWarnings } from './mta/ehlo-check.ts';
import { SHAPING_CHANNEL } from './mta/sql/providers.ts';

// start.mjs takes these from the bundled main.js, so that the ConfigError it checks is the one thrown.
export { ConfigError, loadConfig };

export interface RunningDaemon {
  config: Config;
  app: App | null;
  workers: WorkerPool | null;
  smtp: SmtpEdge | null;
  url: string;
  stop(): Promise<void>;
}

/** Where a boot's time went, in ms: logged with "daemon ready" (bench/boot.ts reads it, docs/boot.md). */
interface BootTimings {
  /** From the process's start to here: Node itself, the build check, loading the daemon's bundle. */
  modulesLoaded: number;
  database: number;
  migrations: number;
  /** buildApp and listen (role api|all). */
  app: number;
  /** Worker threads started, loaded and connected (role worker|all), from before the database is opened. */
  workers: number;
  /** From the process's start to ready. */
  ready: number;
}

export async function startDaemon(config: Config = loadConfig()): Promise<RunningDaemon> {
  const since = (start: number) => Math.round(performance.now() - start);
  const timings: BootTimings = {
    modulesLoaded: Math.round(performance.now()),
    database: 0,
    migrations: 0,
    app: 0,
    workers: 0,
    ready: 0,
  };
  const log = createDaemonLogger({ level: config.logLevel, redact: REDACTED_LOG_PATHS });
  const runsApi = config.role === 'api' || config.role === 'all';
  const runsSmtp = (config.role === 'smtp' || config.role === 'all') && smtpEdgeConfigured(config);
  if (config.role === 'smtp' && !runsSmtp) {
    throw new ConfigError(
      'ROLE',
      'role smtp runs only the SMTP edge, and no SMTP listener is configured: set SMTP_SUBMISSION_PORT, SMTP_SUBMISSION_TLS_PORT and/or SMTP_INBOUND_PORT.',
    );
  }
  const tls = runsApi ? readTlsPair(config) : null;
  if (runsApi) await assertPortFree(config.host, config.port);
  const secrets = loadSecrets(config.dataDir, config.jwtSecret);

  // Worker threads start first: each loads its bundle (≈ 1 s of CPU) while this thread opens and
  // migrates the database — on two cores the two overlap (docs/boot.md). They connect once the URL
  // below resolves, after the migrations, and never touch a schema that is not current.
  const runsWorkers = config.role === 'worker' || config.role === 'all';
  // The worker threads include the MTA thread with direct delivery (jobs/index.ts).
  const runsMtaThread = runsWorkers && config.delivery === 'direct';
  let workers: WorkerPool | null = null;
  let databaseReady!: { resolve(url: string): void; reject(error: unknown): void };
  const databaseUrl = new Promise<string>((resolve, reject) => (databaseReady = { resolve, reject }));
  // A boot that fails rejects it, and nobody may be waiting yet (role api; or startWorkers still
  // starting its threads): it must not count as unhandled, which ends the process before the error
  // reaches the caller (a configuration error's exit code 78 became Node's 1).
  databaseUrl.catch(() => {});
  const workersPhase = performance.now();
  const workersStarting = runsWorkers
    ? startWorkers({ config, databaseUrl, secrets, log }).then((pool) => {
        timings.workers = since(workersPhase);
        return (workers = pool);
      })
    : null;
  // Awaited below; a failure meanwhile must not count as unhandled.
  workersStarting?.catch(() => {});

  let db: Database | null = null;
  let redis: Redis | null = null;
  let node: NodeRegistration;
  try {
    let phase = performance.now();
    db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 20 });
    timings.database = since(phase);
    log.info(
      { database: db.embedded ? `embedded PGlite in ${config.dataDir}` : redactUrl(db.url) },
      'database connected',
    );
    phase = performance.now();
    const applied = await migrateUp(db.sequelize);
    timings.migrations = since(phase);
    if (applied.length) log.info({ applied }, 'migrations applied');
    if ((await checkSecretAgainstDatabase(db.sequelize, secrets)) === 'recorded')
      log.info('recorded the key-check value of this secret in the database');

    if (config.redisUrl) {
      const client = new Redis(config.redisUrl, {
        maxRetriesPerRequest: 2,
        enableOfflineQueue: false,
        lazyConnect: true,
      });
      client.on('error', (error) => log.warn({ err: error.message }, 'redis error'));
      await client.connect().catch((error: Error) => {
        throw new Error(`Cannot reach Redis at ${redactUrl(config.redisUrl!)}: ${error.message}`);
      });
      redis = client;
    }

    node = await registerNode(
      db.sequelize,
      { role: config.role, redis: redis !== null, delivery: config.delivery },
      (error) => log.warn({ err: errorText(error) }, 'could not refresh this node in daemon_nodes'),
      // A worker node's arrival and clean departure change every MTA loop's share of the shaping figures.
      runsWorkers ? SHAPING_CHANNEL : undefined,
    );
  } catch (error) {
    // A boot that fails before the threads have a database leaves no thread or connection behind.
    databaseReady.reject(error);
    await workersStarting?.catch(() => {});
    redis?.disconnect();
    await db?.close().catch(() => {});
    throw error;
  }
  databaseReady.resolve(db.url);

  const deps: AppDeps = {
    config,
    db,
    redis,
    secrets,
    redisPrefix: 'svc:',
    workers: { alive: () => workers?.alive() ?? false, names: () => workers?.names() ?? [] },
    // One for the API and the SMTP edge of this process, as when it was module state: a domain verified
    // through the API is known to submission at once. Worker threads keep their own (jobs/thread.ts).
    dkimSigning: new DkimSigningCache(secrets, db.sequelize),
  };

  // The threads connect while this thread builds the app. Readiness waits for both.
  const phase = performance.now();
  let app: App | null = null;
  let stopTlsReload = () => {};
  let smtp: SmtpEdge | null = null;
  let metricsListener: MetricsListener | null = null;
  try {
    if (runsApi) app = await buildApp(deps, { tls, loggerInstance: log });
    // The SMTP edge listens before the API does: /health/ready answers as soon as the API listens, and a
    // probe (or a test) that found it ready while the SMTP ports were still opening was refused on them.
    if (runsSmtp) {
      // Without the API (role smtp) nothing else has bound the models the send pipeline reads.
      if (!app) initModels(db.sequelize);
      smtp = await startSmtpEdge({ ...deps, log, mtaThreadHere: runsMtaThread }, config);
    }
    if (app) {
      await app.listen({ port: config.port, host: config.host });
      timings.app = since(phase);
      if (tls) stopTlsReload = reloadTlsOnHangup(app.server as unknown as import('node:tls').Server, config, log);
    }
    // METRICS_PORT: /metrics on its own (internal) listener, on every role (docs/metrics.md).
    if (config.metricsPort !== null)
      metricsListener = await startMetricsListener({ config, db, log, metrics: app ? metricsOf(app) : null });
    await workersStarting;
  } catch (error) {
    // A boot that fails half-way leaves no thread, listener or connection behind.
    stopTlsReload();
    await metricsListener?.close().catch(() => {});
    await smtp?.close().catch(() => {});
    await app?.close().catch(() => {});
    await workersStarting?.then((pool) => pool.stop()).catch(() => {});
    await node.stop().catch(() => {});
    redis?.disconnect();
    await db.close().catch(() => {});
    throw error;
  }
  timings.ready = Math.round(performance.now());
  log.info({ bootMs: timings }, 'daemon ready');
  // Direct delivery with an EHLO name receivers refuse costs mail: say so now, without delaying boot.
  if (runsMtaThread) {
    const dns = createDnsClient({ servers: config.dnsServers });
    ehloWarnings(dns, config).then(
      (warnings) => warnings.forEach((warning) => log.warn({ ehloName: config.ehloName }, warning)),
      (error: Error) => log.warn({ err: error.message }, 'could not check the EHLO name'),
    );
  }
  const url = app
    ? `${tls ? 'https' : 'http'}://${config.host}:${(app.server.address() as { port: number }).port}`
    : '';

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      log.info('shutting down: draining requests and in-flight jobs');
      stopTlsReload();
      await metricsListener?.close();
      await smtp?.close();
      await app?.close();
      await workers?.stop();
      await node.stop();
      redis?.disconnect();
      await db.close();
    })();
    return stopping;
  };
  return { config, app, workers, smtp, url, stop };
}

/** Runs the daemon until SIGTERM or SIGINT. Used by `svc daemon start` and `npm start`. */
export async function runDaemon(config: Config = loadConfig()): Promise<void> {
  const daemon = await startDaemon(config);
  const onSignal = (signal: string) => {
    daemon.app?.log.info({ signal }, 'signal received');
    daemon.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
}
