// Boot order: config → secrets → database (embedded or external) → migrations → Redis →
// app.listen (role api|all) → worker threads (role worker|all). SIGTERM/SIGINT drain and stop.
import { Redis } from 'ioredis';
import { loadConfig, type Config } from './config.ts';
import { openDatabase, redactUrl } from './db/index.ts';
import { migrateUp } from './db/migrate.ts';
import { loadSecrets } from './secrets.ts';
import { buildApp, REDACTED_LOG_PATHS } from './app.ts';
import { startWorkers, type WorkerPool } from './jobs/index.ts';
import type { App, AppDeps } from './app-types.ts';
import { assertPortFree, createDaemonLogger } from './logging.ts';

export interface RunningDaemon {
  config: Config;
  app: App | null;
  workers: WorkerPool | null;
  url: string;
  stop(): Promise<void>;
}

export async function startDaemon(config: Config = loadConfig()): Promise<RunningDaemon> {
  const log = createDaemonLogger({ level: config.logLevel, redact: REDACTED_LOG_PATHS });
  if (config.role !== 'worker') await assertPortFree(config.host, config.port);
  const secrets = loadSecrets(config.dataDir, config.jwtSecret);
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 20 });
  log.info({ database: db.embedded ? `embedded PGlite in ${config.dataDir}` : redactUrl(db.url) }, 'database connected');
  const applied = await migrateUp(db.sequelize);
  if (applied.length) log.info({ applied }, 'migrations applied');

  let redis: Redis | null = null;
  if (config.redisUrl) {
    redis = new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: false, lazyConnect: true });
    redis.on('error', (error) => log.warn({ err: error.message }, 'redis error'));
    await redis.connect().catch((error: Error) => {
      throw new Error(`Cannot reach Redis at ${redactUrl(config.redisUrl!)}: ${error.message}`);
    });
  }

  let workers: WorkerPool | null = null;
  const deps: AppDeps = {
    config,
    db,
    redis,
    secrets,
    redisPrefix: 'svc:',
    workers: { alive: () => workers?.alive() ?? false, names: () => workers?.names() ?? [] },
  };

  let app: App | null = null;
  if (config.role !== 'worker') {
    app = await buildApp(deps, { loggerInstance: log });
    await app.listen({ port: config.port, host: config.host });
  }
  if (config.role !== 'api') {
    workers = await startWorkers({ config, databaseUrl: db.url, secrets, log });
  }
  const url = app ? `http://${config.host}:${(app.server.address() as { port: number }).port}` : '';

  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      log.info('shutting down: draining requests and in-flight jobs');
      await app?.close();
      await workers?.stop();
      redis?.disconnect();
      await db.close();
    })();
    return stopping;
  };
  return { config, app, workers, url, stop };
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
