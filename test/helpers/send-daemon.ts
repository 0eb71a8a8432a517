// The real daemon (`node bin/svc.js daemon start`) as a child process, for the end-to-end and
// crash tests of the send pipeline: a database seeded with a tenant that may send (live key,
// verified sending domain with a DKIM key, a plan large enough), the daemon started on it, and
// the database opened again by the test once the daemon has stopped.
//
// The embedded PGlite belongs to the process that opened it, so the test reads the database only
// while no daemon runs (PostgreSQL would allow more; both modes are treated alike on purpose).
import type { TestDnsServer } from './dns-server.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { createSigner } from 'fast-jwt';
import { QueryTypes } from 'sequelize';
import { loadConfig } from '../../daemon/config.ts';
import { openDatabase, type Database } from '../../daemon/db/index.ts';
import { migrateUp } from '../../daemon/db/migrate.ts';
import { initModels } from '../../daemon/modules/models.ts';
import { loadSecrets } from '../../daemon/secrets.ts';
import { Admin } from '../../daemon/modules/auth/model.ts';
import type { AccessTokenClaims } from '../../daemon/context.ts';
import { generateDkimKey } from '../../daemon/modules/domains/keys.ts';
import { createApiKey, createTenant } from './fixtures.ts';
import { createTestDatabase, type TestDatabase } from './context.ts';
import { waitForReady } from './daemon-process.ts';

const SVC = fileURLToPath(new URL('../../bin/svc.js', import.meta.url));
export const SENDING_DOMAIN = 'acme.test';

export interface SendWorld {
  database: TestDatabase;
  /** The daemon's environment: pass it to every start on this database. */
  env: Record<string, string>;
  tenantId: string;
  apiKey: string;
  /** Base URL the daemon will listen on (PUBLIC_URL too, so tracking links can be followed). */
  url: string;
}

export interface ChildDaemon {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exit: Promise<number | null>;
}

const children = new Set<ChildProcess>();

/** SIGKILLs every daemon still running; call it from test.after so a failing test leaves none behind. */
export function killAllDaemons(): void {
  for (const child of children) child.kill('SIGKILL');
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Opens (and for PGlite, owns) the world's database; close it before a daemon starts on it. */
export async function openWorldDatabase(world: Pick<SendWorld, 'database'>): Promise<Database> {
  const db = await openDatabase({ databaseUrl: world.database.url, dataDir: world.database.dataDir });
  initModels(db.sequelize);
  return db;
}

export async function countRows(
  db: Database,
  sql: string,
  replacements: Record<string, unknown> = {},
): Promise<number> {
  const [row] = await db.sequelize.query<{ n: number }>(
    sql.replace(/^SELECT count\(\*\)/i, 'SELECT count(*)::int AS n'),
    { replacements, type: QueryTypes.SELECT },
  );
  return row.n;
}

/**
 * A fresh database with a tenant on the business plan, a live API key with every scope and a
 * verified acme.test domain whose DKIM key is sealed with the secret the daemon will derive.
 */
export async function seedSendWorld(env: Record<string, string> = {}): Promise<SendWorld> {
  const database = await createTestDatabase({ migrated: true });
  const port = await freePort();
  const daemonEnv: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    PORT: String(port),
    DATA_DIR: database.dataDir,
    JWT_SECRET: `send-daemon-${randomBytes(16).toString('hex')}`,
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...env,
  };
  const config = loadConfig(daemonEnv);
  const secrets = loadSecrets(config.dataDir, config.jwtSecret);
  const db = await openWorldDatabase({ database });
  try {
    await migrateUp(db.sequelize);
    const { tenantId, apiKey } = await seedTenant(db, secrets.encryptionKey);
    return { database, env: daemonEnv, tenantId, apiKey, url: config.publicUrl };
  } finally {
    await db.close();
  }
}

/** A tenant that may send: owner, business plan, live key with every scope, verified acme.test with a DKIM key. */
async function seedTenant(db: Database, encryptionKey: Buffer): Promise<{ tenantId: string; apiKey: string }> {
  const admin = await Admin.create({
    email: `owner-${randomBytes(4).toString('hex')}@example.test`,
    passwordHash: 'fixture-has-no-password',
    isPlatformAdmin: false,
    emailVerifiedAt: new Date(),
  });
  const tenantId = await createTenant(admin.id);
  // Hundreds of sends: beyond the free plan's 100 a month.
  await db.sequelize.query(`UPDATE tenants SET plan = 'business' WHERE id = :tenantId`, {
    replacements: { tenantId },
  });
  const key = await createApiKey(tenantId);
  const dkim = await generateDkimKey(encryptionKey);
  // Checked just now: the maintenance thread re-checks DNS of domains never checked, and acme.test has none.
  await db.sequelize.query(
    `INSERT INTO domains (tenant_id, name, status, dkim_selector, dkim_public_key, dkim_private_key_sealed, verified_at, last_checked_at)
       VALUES (:tenantId, :name, 'verified', :selector, :publicKey, :sealed, now(), now())`,
    {
      replacements: {
        tenantId,
        name: SENDING_DOMAIN,
        selector: dkim.selector,
        publicKey: dkim.publicKey,
        sealed: dkim.privateKeySealed,
      },
    },
  );
  return { tenantId, apiKey: key.key };
}

/** Another sending tenant in the world's database (its own key and acme.test), e.g. for fairness tests. */
export async function seedAnotherTenant(world: SendWorld): Promise<{ tenantId: string; apiKey: string }> {
  const config = loadConfig(world.env);
  const secrets = loadSecrets(config.dataDir, config.jwtSecret);
  const db = await openWorldDatabase(world);
  try {
    return await seedTenant(db, secrets.encryptionKey);
  } finally {
    await db.close();
  }
}

/** Spawns `svc daemon start` on the world's database, without waiting for it (startChildDaemon waits). */
export function spawnChildDaemon(world: SendWorld): ChildDaemon {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.REDIS_URL;
  delete base.NODE_OPTIONS;
  const child = spawn(process.execPath, [SVC, 'daemon', 'start'], {
    env: { ...base, ...world.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, url: world.url, output: () => output, exit };
}

/** Starts `svc daemon start` on the world's database and resolves once /health/ready answers 200. */
export async function startChildDaemon(world: SendWorld, timeoutMs = 60_000): Promise<ChildDaemon> {
  const daemon = spawnChildDaemon(world);
  try {
    await waitForReady(daemon, timeoutMs);
  } catch (error) {
    daemon.child.kill('SIGKILL');
    throw error;
  }
  return daemon;
}

/** SIGTERM, then the exit code (SIGKILL after `graceMs` so a hung daemon cannot hang the test). */
export async function stopChildDaemon(daemon: ChildDaemon, graceMs = 30_000): Promise<number | null> {
  daemon.child.kill('SIGTERM');
  const timer = setTimeout(() => daemon.child.kill('SIGKILL'), graceMs);
  const code = await daemon.exit;
  clearTimeout(timer);
  return code;
}

/** HTTP with the world's API key. */
export async function api(
  world: SendWorld,
  method: string,
  path: string,
  body?: unknown,
  /** Another bearer than the world's API key (an admin's access token: signInAdmin); '' sends none. */
  bearer: string = world.apiKey,
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${world.url}${path}`, {
    method,
    headers: {
      ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/**
 * An access token for `adminId`, signed with the world's JWT secret as a sign-in signs it: set-ups that are
 * not about passwords spend no scrypt hash (N=2^17, ~0.5 s of CPU each) on a sign-in.
 */
export function signAccessToken(world: Pick<SendWorld, 'env'>, adminId: string, platformAdmin: boolean): string {
  const sign = createSigner({ key: world.env.JWT_SECRET, algorithm: 'HS256', expiresIn: 3_600_000 });
  return sign({ sub: adminId, typ: 'access', pa: platformAdmin } satisfies AccessTokenClaims);
}

/**
 * Publishes the DMARC record that direct delivery requires of the From domain before it sends
 * (domains/sender-rules.ts): every DELIVERY=direct test's DNS zone needs it.
 */
export function publishSenderDmarc(dns: Pick<TestDnsServer, 'zone'>, domain = SENDING_DOMAIN): void {
  dns.zone.txt.set(`_dmarc.${domain}`, ['v=DMARC1; p=none']);
}
