// Migrations live in migrations/NNNN-name.ts, each with up() and down() over raw SQL so that the
// same files run on PostgreSQL and on the embedded PGlite. Applied at boot and by `svc db migrate`.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Umzug, SequelizeStorage, type MigrationParams } from 'umzug';
import type { QueryInterface, Sequelize } from 'sequelize';

export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'migrations');

export interface MigrationContext {
  sequelize: Sequelize;
  queryInterface: QueryInterface;
  /** Runs one or more statements separated by semicolons. */
  sql(statements: string): Promise<void>;
}

export type Migration = (params: MigrationParams<MigrationContext>) => Promise<void>;

function migrationFiles(): string[] {
  return readdirSync(MIGRATIONS_DIR)
    .filter((name) => /^\d{4}-[\w-]+\.(ts|js)$/.test(name))
    .sort();
}

export function createMigrator(sequelize: Sequelize, log: (message: string) => void = () => {}) {
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
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migrations' }),
    logger: {
      info: (m) => log(typeof m === 'string' ? m : JSON.stringify(m)),
      warn: () => {},
      error: () => {},
      debug: () => {},
    },
  });
}

export async function migrateUp(sequelize: Sequelize, log?: (message: string) => void): Promise<string[]> {
  const applied = await createMigrator(sequelize, log).up();
  return applied.map((m) => m.name);
}

export async function pendingMigrations(sequelize: Sequelize): Promise<string[]> {
  return (await createMigrator(sequelize).pending()).map((m) => m.name);
}
