// A real daemon for one test file: its own database (a fresh PostgreSQL database when DATABASE_URL
// is set, else an embedded PGlite in a temp dir), its own Redis key prefix, migrations applied.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../daemon/config.ts';
import { openDatabase, type Database } from '../../daemon/db/index.ts';
import { migrateUp } from '../../daemon/db/migrate.ts';
import { loadSecrets } from '../../daemon/secrets.ts';
import { buildApp } from '../../daemon/app.ts';
import type { App, AppDeps } from '../../daemon/app-types.ts';
import { closeMailResources, type MailResources } from '../../daemon/mail/resources.ts';
import { createMailResources } from '../../daemon/modules/mail-resources.ts';

export interface TestContext {
  app: App;
  deps: AppDeps;
  config: Config;
  db: Database;
  dataDir: string;
  /** URL of this file's database (for worker threads and second daemons). */
  databaseUrl: string;
  /** What a worker thread creates for itself, for tests that run job handlers in this process. */
  workerResources: MailResources;
  close(): Promise<void>;
}

export interface TestDatabase {
  url: string | null;
  dataDir: string;
  drop(): Promise<void>;
}

/** A fresh, empty database for this test file. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const base = process.env.DATABASE_URL;
  if (!base) {
    return { url: null, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `svc_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    dataDir,
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestContextOptions {
  env?: Record<string, string>;
  /** Start with this database instead of a new one (a restarted daemon). */
  database?: TestDatabase;
  workers?: AppDeps['workers'];
}

export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: database.dataDir,
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    ROLE: 'api',
    LOG_LEVEL: 'silent',
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...options.env,
  });
  const db = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrateUp(db.sequelize);
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, maxRetriesPerRequest: 1 }) : null;
  const deps: AppDeps = {
    config,
    db,
    redis,
    secrets: loadSecrets(config.dataDir, 'test-secret-that-is-long-enough-0123456789'),
    redisPrefix: `t:${randomBytes(4).toString('hex')}:`,
    workers: options.workers,
  };
  const app = await buildApp(deps, { logger: false });
  await app.ready();
  const workerResources = createMailResources(config, deps.secrets, db.sequelize);
  let closed = false;
  return {
    app,
    deps,
    config,
    db,
    dataDir: config.dataDir,
    databaseUrl: db.url,
    workerResources,
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      await closeMailResources(workerResources);
      await db.close();
      redis?.disconnect();
      if (!options.database) await database.drop();
    },
  };
}
