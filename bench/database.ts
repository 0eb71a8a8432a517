// A fresh PostgreSQL database for one bench run (like test/helpers/context.ts does for a test file),
// with the daemon's migrations, one tenant whose quota cannot run out, a live API key, a verified
// sending domain with its DKIM key, and the baseline's table.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { QueryTypes, type Sequelize } from 'sequelize';
import { openDatabase, type Database } from '../daemon/db/index.ts';
import { migrateUp } from '../daemon/db/migrate.ts';
import { initModels } from '../daemon/modules/models.ts';
import { loadSecrets } from '../daemon/secrets.ts';
import { generateDkimKey } from '../daemon/modules/domains/keys.ts';
import { generateApiKey } from '../daemon/modules/auth/api-key-format.ts';
import { ApiKey, Tenant } from '../daemon/modules/tenants/model.ts';
import { API_KEY_SCOPES } from '../shared/constants.ts';

export const SENDER_DOMAIN = 'bench.example';

export interface BenchDatabase {
  url: string;
  db: Database;
  postgresVersion: string;
  apiKey: string;
  tenantId: string;
  drop(): Promise<void>;
}

async function adminQuery(baseUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * A tenant whose quota cannot run out, with a live API key and the verified sending domain (its DKIM
 * key sealed with this data dir's secrets). Models must be bound to `sequelize` (initModels).
 */
export async function seedBenchTenant(
  sequelize: Sequelize,
  jwtSecret: string,
  dataDir: string,
  name = 'Bench',
): Promise<{ tenantId: string; apiKey: string }> {
  const tenant = await Tenant.create({ name, plan: 'business', monthlyLimit: 1_000_000_000 });
  const generated = generateApiKey('live');
  await ApiKey.create({
    tenantId: tenant.id,
    name: 'bench key',
    prefix: generated.prefix,
    keyHash: generated.keyHash,
    scopes: [...API_KEY_SCOPES],
    environment: 'live',
  });
  // Relayed mail must come from a verified domain; the daemon signs it with this DKIM key. Checked
  // just now, so the maintenance thread's daily DNS re-check leaves it alone (its DNS is fiction).
  const key = await generateDkimKey(loadSecrets(dataDir, jwtSecret).encryptionKey);
  await sequelize.query(
    `INSERT INTO domains (tenant_id, name, status, dkim_selector, dkim_public_key, dkim_private_key_sealed, verified_at, last_checked_at)
     VALUES (:tenantId, :name, 'verified', :selector, :publicKey, :sealed, now(), now())`,
    {
      replacements: {
        tenantId: tenant.id,
        name: SENDER_DOMAIN,
        selector: key.selector,
        publicKey: key.publicKey,
        sealed: key.privateKeySealed,
      },
    },
  );
  return { tenantId: tenant.id, apiKey: generated.key };
}

async function seed(sequelize: Sequelize, jwtSecret: string, dataDir: string) {
  const seeded = await seedBenchTenant(sequelize, jwtSecret, dataDir);
  // The baseline writes one row per request into a table shaped like email_logs (same columns,
  // defaults and indexes; no foreign key).
  await sequelize.query(`CREATE TABLE bench_sends (LIKE email_logs INCLUDING DEFAULTS INCLUDING INDEXES)`);
  return seeded;
}

export async function createBenchDatabase(baseUrl: string, jwtSecret: string, dataDir: string): Promise<BenchDatabase> {
  const name = `svc_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  await adminQuery(baseUrl, `CREATE DATABASE ${name}`);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ databaseUrl: url.toString(), dataDir });
  const drop = async () => {
    await db.close().catch(() => {});
    await adminQuery(baseUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  };
  try {
    await migrateUp(db.sequelize);
    initModels(db.sequelize);
    const seeded = await seed(db.sequelize, jwtSecret, dataDir);
    const [{ version }] = await db.sequelize.query<{ version: string }>(
      `SELECT current_setting('server_version') AS version`,
      { type: QueryTypes.SELECT },
    );
    return { url: url.toString(), db, postgresVersion: version, ...seeded, drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

/**
 * Where the bench itself writes, deletes or rewrites many rows at once (the accept runs' jobs and logs, a
 * drained queue, bench:scale's millions of logs and their outcomes), a server with autovacuum on
 * (PostgreSQL's default, what operators run) analyzes and cleans up behind it within a minute. This
 * machine's CI server runs with `autovacuum = off`, and there the dead rows stay under the drain's claims
 * and the tables keep no statistics: the 202 → sink latency read p50 808 / p99 1,211 ms inside a full run
 * where `--drain` runs, which make no such mass changes first, read 20–60 ms at p50 (docs/drain.md,
 * 2026-11-27). So when autovacuum is off the benches do its work themselves, at those points, and say so
 * (`ANALYZE` alone where autovacuum would only have analyzed, as after inserts); with it on they leave the
 * tables to it.
 */
export async function vacuumAsAutovacuumWould(
  sequelize: Sequelize,
  when: string,
  tables: string[],
  log: (message: string) => void,
  command: 'VACUUM (ANALYZE)' | 'ANALYZE' = 'VACUUM (ANALYZE)',
): Promise<void> {
  const [row] = await sequelize.query<{ autovacuum: string }>(`SHOW autovacuum`, { type: QueryTypes.SELECT });
  if (row.autovacuum === 'on') return;
  const started = Date.now();
  await sequelize.query(`${command} ${tables.join(', ')}`);
  log(
    `autovacuum is off on this server: ${command === 'ANALYZE' ? 'analyzed' : 'vacuumed'} ${tables.join(', ')} ${when}, as autovacuum would (${Date.now() - started} ms)`,
  );
}

interface TableActivity {
  name: string;
  reltuples: number;
  dead: number;
  insertedSinceVacuum: number;
  modifiedSinceAnalyze: number;
}

/**
 * One pass of what autovacuum's launcher would start now, by its own rules and this server's settings
 * (`autovacuum_vacuum_threshold` + `autovacuum_vacuum_scale_factor` × rows for dead rows, the insert
 * threshold and scale factor for rows inserted since the last vacuum, the analyze threshold and scale
 * factor for rows changed since the last analyze), over the leaf tables named or partitions of them.
 * For a bench that writes for an hour on a server with `autovacuum = off`: with it on, nothing is done.
 * Answers what it did, for the log.
 */
export async function autovacuumPass(sequelize: Sequelize, parents: string[]): Promise<string[]> {
  const [setting] = await sequelize.query<{ autovacuum: string }>(`SHOW autovacuum`, { type: QueryTypes.SELECT });
  if (setting.autovacuum === 'on') return [];
  const tables = await sequelize.query<TableActivity>(
    `SELECT c.oid::regclass::text AS name, greatest(c.reltuples, 0)::float8 AS reltuples,
            s.n_dead_tup::float8 AS dead, s.n_ins_since_vacuum::float8 AS "insertedSinceVacuum",
            s.n_mod_since_analyze::float8 AS "modifiedSinceAnalyze"
       FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid
      WHERE c.relkind = 'r'
        AND (c.oid = ANY (CAST(:parents AS regclass[]))
             OR c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = ANY (CAST(:parents AS regclass[]))))`,
    { type: QueryTypes.SELECT, replacements: { parents: `{${parents.join(',')}}` } },
  );
  const [limits] = await sequelize.query<Record<string, number>>(
    `SELECT current_setting('autovacuum_vacuum_threshold')::float8 AS "vacuumBase",
            current_setting('autovacuum_vacuum_scale_factor')::float8 AS "vacuumScale",
            current_setting('autovacuum_vacuum_insert_threshold')::float8 AS "insertBase",
            current_setting('autovacuum_vacuum_insert_scale_factor')::float8 AS "insertScale",
            current_setting('autovacuum_analyze_threshold')::float8 AS "analyzeBase",
            current_setting('autovacuum_analyze_scale_factor')::float8 AS "analyzeScale"`,
    { type: QueryTypes.SELECT },
  );
  const done: string[] = [];
  for (const table of tables) {
    const vacuum =
      table.dead > limits.vacuumBase + limits.vacuumScale * table.reltuples ||
      table.insertedSinceVacuum > limits.insertBase + limits.insertScale * table.reltuples;
    const analyze = table.modifiedSinceAnalyze > limits.analyzeBase + limits.analyzeScale * table.reltuples;
    if (!vacuum && !analyze) continue;
    const command = vacuum && analyze ? 'VACUUM (ANALYZE)' : vacuum ? 'VACUUM' : 'ANALYZE';
    const started = Date.now();
    await sequelize.query(`${command} ${table.name}`);
    done.push(`${command} ${table.name} (${Math.round(table.dead)} dead, ${Date.now() - started} ms)`);
  }
  return done;
}
