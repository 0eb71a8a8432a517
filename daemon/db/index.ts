// Opens the database the config names (or the embedded one) as a Sequelize instance.
// The daemon's API side and each worker thread open their own; they share only the URL.
import { errorText } from '../errors.ts';
import { Sequelize } from 'sequelize';
import pg from 'pg';
import { EMBEDDED_TEMPLATE_PATH, startEmbeddedPostgres, type EmbeddedPostgres } from './embedded.ts';
import { createSql, type Sql } from './sql.ts';

// Postgres bigint/numeric counts arrive as strings by default; every count we read fits a double.
pg.types.setTypeParser(20, (value: string) => Number(value));

export interface Database {
  sequelize: Sequelize;
  /** Plain `pg` for the hot paths (./sql.ts). */
  sql: Sql;
  /** Connection string the worker threads use to reach the same database. */
  url: string;
  embedded: boolean;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  databaseUrl: string | null;
  dataDir: string;
  poolMax?: number;
  /** Reuse an already running embedded server (worker threads are given its URL). */
  logging?: (sql: string) => void;
}

export function connectSequelize(
  url: string,
  poolMax = 10,
  logging: false | ((sql: string) => void) = false,
): Sequelize {
  return new Sequelize(url, {
    dialect: 'postgres',
    dialectModule: pg,
    logging,
    pool: { max: poolMax, min: 0, idle: 10_000, acquire: 30_000 },
    define: { underscored: true, timestamps: true },
  });
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  let embedded: EmbeddedPostgres | null = null;
  let url = options.databaseUrl;
  if (url === null) {
    embedded = await startEmbeddedPostgres(options.dataDir, { templatePath: EMBEDDED_TEMPLATE_PATH });
    url = embedded.url;
  }
  const sequelize = connectSequelize(url, options.poolMax ?? 10, options.logging ?? false);
  try {
    await sequelize.authenticate();
  } catch (error) {
    await embedded?.stop();
    const reason = errorText(error);
    throw new Error(`Cannot reach the database at ${redactUrl(url)}: ${reason}`);
  }
  const sql = createSql(url, { max: options.poolMax ?? 10, embedded: embedded !== null });
  return {
    sequelize,
    sql,
    url,
    embedded: embedded !== null,
    async close() {
      await sql.close();
      await sequelize.close();
      await embedded?.stop();
    },
  };
}

/** A connection string with its password hidden, for logs and error messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<unparseable url>';
  }
}
