// A real daemon for one test file: its own database (a fresh PostgreSQL database when DATABASE_URL
// is set, else an embedded PGlite in a temp dir), its own Redis key prefix, migrations applied.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { loadConfig, type Config } from '../../daemon/config.ts';
import { openDatabase, type Database } from '../../daemon/db/index.ts';
import { MIGRATIONS_DIR, migrateUp } from '../../daemon/db/migrate.ts';
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

export interface TestDatabaseOptions {
  /**
   * Every migration applied: on PostgreSQL a copy of a template database that the migrations built once
   * (per migration code and day, shared by the run's files), on PGlite an empty one the caller migrates.
   * Callers still run migrateUp, which costs one query on a current schema.
   */
  migrated?: boolean;
}

/** A fresh database for this test file: empty unless `migrated` is asked for. */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-test-'));
  const base = process.env.DATABASE_URL;
  if (!base) {
    return { url: null, dataDir, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  const name = `svc_t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    if (options.migrated) await createFromTemplate(admin, base, name);
    else await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(base, name),
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

function databaseUrl(base: string, name: string): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

// Migrating a new database cost ~1 s of the test's CPU and ~1 s of PostgreSQL's (74 migrations, 2026-11-29),
// and a hundred test files each did it; copying the migrated template costs PostgreSQL a 13 MB copy.
const TEMPLATE_PREFIX = 'svc_tpl_';

/**
 * The migrations and every file they import (relative imports, followed), hashed: a template is used only
 * by the code that built it. The day is part of the name too, since migrations create the partitions
 * around the current date, as a fresh migration would.
 */
function templateName(): string {
  const hash = createHash('sha256');
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    hash.update(`${relative(MIGRATIONS_DIR, file)}\0${text}\0`);
    for (const [, spec] of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) visit(resolve(dirname(file), spec));
  };
  for (const name of readdirSync(MIGRATIONS_DIR).sort()) {
    if (/^\d{4}-[\w-]+\.ts$/.test(name)) visit(join(MIGRATIONS_DIR, name));
  }
  const day = new Date().toISOString().slice(0, 10).replaceAll('-', '');
  return `${TEMPLATE_PREFIX}${day}_${hash.digest('hex').slice(0, 16)}`;
}

async function createFromTemplate(admin: pg.Client, base: string, name: string): Promise<void> {
  const template = templateName();
  const exists = async () =>
    (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template])).rowCount === 1;
  if (!(await exists())) {
    // One file builds it; a file that starts meanwhile waits here, then finds it built.
    await admin.query('SELECT pg_advisory_lock(hashtext($1))', [TEMPLATE_PREFIX]);
    try {
      if (!(await exists())) await buildTemplate(admin, base, template);
    } finally {
      await admin.query('SELECT pg_advisory_unlock(hashtext($1))', [TEMPLATE_PREFIX]);
    }
  }
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
}

/** Migrates a new database under another name and renames it, so a template that exists is complete. */
async function buildTemplate(admin: pg.Client, base: string, template: string): Promise<void> {
  // Templates of earlier days (or of other code) are dropped: a day's grace leaves another checkout's run alone.
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10).replaceAll('-', '');
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname LIKE '${TEMPLATE_PREFIX}%' AND substr(datname, $1, 8) < $2`,
    [TEMPLATE_PREFIX.length + 1, yesterday],
  );
  for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  const building = `${TEMPLATE_PREFIX}build_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${building}`);
  try {
    const db = await openDatabase({ databaseUrl: databaseUrl(base, building), dataDir: tmpdir() });
    try {
      await migrateUp(db.sequelize);
    } finally {
      await db.close();
    }
    await admin.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
  } catch (error) {
    await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    throw error;
  }
}

export interface TestContextOptions {
  env?: Record<string, string>;
  /** Start with this database instead of a new one (a restarted daemon). */
  database?: TestDatabase;
  workers?: AppDeps['workers'];
}

export async function createTestContext(options: TestContextOptions = {}): Promise<TestContext> {
  const database = options.database ?? (await createTestDatabase({ migrated: true }));
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
