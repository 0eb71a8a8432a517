// Migrations live in migrations/NNNN-name.ts, each with up() and down() over raw SQL so that the
// same files run on PostgreSQL and on the embedded PGlite. Applied at boot and by `svc db migrate`.
// A boot whose schema is current costs one query: umzug (with the command-line parser it loads,
// ≈ 0.6 s of CPU) is imported only when a migration is pending or one is rolled back.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { MigrationParams, Umzug } from 'umzug';
import { QueryTypes, type QueryInterface, type Sequelize } from 'sequelize';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

export interface MigrationContext {
  sequelize: Sequelize;
  queryInterface: QueryInterface;
  /** Runs one or more statements separated by semicolons. */
  sql(statements: string): Promise<void>;
}

export type Migration = (params: MigrationParams<MigrationContext>) => Promise<void>;

/** The table umzug records applied migrations in (one row per file name, without its extension). */
const MIGRATIONS_TABLE = 'schema_migrations';

function migrationFiles(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => /^\d{4}-[\w-]+\.(ts|js)$/.test(name))
    .sort();
}

export async function createMigrator(
  sequelize: Sequelize,
  log: (message: string) => void = () => {},
): Promise<Umzug<MigrationContext>> {
  const { Umzug, SequelizeStorage } = await import('umzug');
  const context: MigrationContext = {
    sequelize,
    queryInterface: sequelize.getQueryInterface(),
    async sql(statements) {
      await sequelize.query(statements);
    },
  };
  return new Umzug<MigrationContext>({
    migrations: migrationFiles().map((file) => {
      const path = join(MIGRATIONS_DIR, file);
      const load = () => import(pathToFileURL(path).href) as Promise<{ up: Migration; down: Migration }>;
      return {
        name: file.replace(/\.(ts|js)$/, ''),
        path,
        up: async (params) => (await load()).up(params),
        down: async (params) => (await load()).down(params),
      };
    }),
    context,
    storage: new SequelizeStorage({ sequelize, tableName: MIGRATIONS_TABLE }),
    logger: {
      info: (m) => log(typeof m === 'string' ? m : JSON.stringify(m)),
      warn: () => {},
      error: () => {},
      debug: () => {},
    },
  });
}

/**
 * Whether every migration file is recorded as applied, in one query (false when nothing was ever
 * migrated here). Only a "yes" skips anything: any doubt runs umzug, which checks for itself.
 */
async function schemaIsCurrent(sequelize: Sequelize): Promise<boolean> {
  const names = migrationFiles().map((file) => file.replace(/\.(ts|js)$/, ''));
  try {
    const [{ missing }] = await sequelize.query<{ missing: number | string }>(
      `SELECT count(*) AS missing FROM unnest(ARRAY[:names]::text[]) AS file(name)
        WHERE NOT EXISTS (SELECT 1 FROM ${MIGRATIONS_TABLE} m WHERE m.name = file.name)`,
      { replacements: { names }, type: QueryTypes.SELECT },
    );
    return Number(missing) === 0;
  } catch {
    // No schema_migrations table yet (a new database): umzug creates it.
    return false;
  }
}

export async function migrateUp(sequelize: Sequelize, log?: (message: string) => void): Promise<string[]> {
  if (await schemaIsCurrent(sequelize)) return [];
  const applied = await (await createMigrator(sequelize, log)).up();
  return applied.map((m) => m.name);
}

export async function pendingMigrations(sequelize: Sequelize): Promise<string[]> {
  return (await (await createMigrator(sequelize)).pending()).map((m) => m.name);
}
