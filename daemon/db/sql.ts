// Plain SQL on `pg` for the hot paths (accept, claim, deliver, record outcomes, webhook fan-out and
// delivery). Sequelize stays for the CRUD modules, where it reads best; a statement that runs once
// per message goes through here instead, because Sequelize's query building, replacement escaping
// and model hydration cost more CPU than the statement itself (see bench/ and the README).
//
// A statement is declared once, as a constant with a stable name, and run as a named prepared
// statement: PostgreSQL parses and plans it once per connection. The embedded PGlite serves every
// client from ONE backend session, where a name prepared by one connection collides with the same
// name prepared by another, so there statements run unnamed (parsed each time; still no Sequelize).
import pg from 'pg';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export interface Statement {
  /** Unique across the daemon; PostgreSQL keys the prepared plan by it. */
  name: string;
  text: string;
}

/** A declared statement with the values of one run (for callers that run it in their transaction). */
export interface BoundStatement {
  statement: Statement;
  values: unknown[];
}

/** A pool, or one checked-out client inside a transaction. */
export type SqlRunner = pg.Pool | pg.ClientBase;

export interface Sql {
  pool: pg.Pool;
  /** Runs a declared statement on the pool (or the given client) and answers its rows. */
  rows<T extends pg.QueryResultRow>(statement: Statement, values: unknown[], runner?: SqlRunner): Promise<T[]>;
  /** Runs a declared statement and answers the number of rows it touched. */
  count(statement: Statement, values: unknown[], runner?: SqlRunner): Promise<number>;
  /** BEGIN … COMMIT on one client; ROLLBACK and rethrow when `work` throws. */
  transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function declare(name: string, text: string): Statement {
  return { name, text };
}

/**
 * The startup options of every connection to a real PostgreSQL (this pool and Sequelize's,
 * db/index.ts): a prepared statement is planned once per connection, with a generic plan. The
 * declared statements are written so that their plan does not depend on their values. Under the
 * default `plan_cache_mode` (auto) PostgreSQL planned those touching partitioned tables again at
 * every execution, because a generic plan's estimate counts every partition and the custom plan
 * always looked cheaper: 0.5–2 ms per execution (the spool's insert, the outcome statements), a
 * fifth of the database's CPU in bench:mta (docs/mta.md). Statements Sequelize builds carry their
 * values inline, with no parameters, so their plans do not change; the log searches are such.
 */
export const GENERIC_PLANS = '-c plan_cache_mode=force_generic_plan';

/** Sequelize's transaction runs on one pg client: declared statements join it there. */
export function clientOf(transaction: Transaction): pg.ClientBase {
  return (transaction as unknown as { connection: pg.ClientBase }).connection;
}

/** Whether Sequelize's connections were opened with GENERIC_PLANS, i.e. to a real PostgreSQL (not PGlite). */
function plansGenerically(sequelize: Sequelize): boolean {
  const { options } = sequelize as unknown as { options: { dialectOptions?: { options?: string } } };
  return options.dialectOptions?.options === GENERIC_PLANS;
}

export function createSql(url: string, options: { max: number; embedded: boolean }): Sql {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max,
    idleTimeoutMillis: 10_000,
    ...(options.embedded ? {} : { options: GENERIC_PLANS }),
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const config = (statement: Statement, values: unknown[]): pg.QueryConfig =>
    options.embedded ? { text: statement.text, values } : { name: statement.name, text: statement.text, values };
  return {
    pool,
    async rows<T extends pg.QueryResultRow>(statement: Statement, values: unknown[], runner: SqlRunner = pool) {
      return (await runner.query<T>(config(statement, values))).rows;
    },
    async count(statement, values, runner = pool) {
      return (await runner.query(config(statement, values))).rowCount ?? 0;
    },
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        // A client whose ROLLBACK fails is not given back to the pool: it is destroyed.
        await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
        throw error;
      } finally {
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

/**
 * Runs a declared statement through Sequelize (bind parameters, not replacements), for the callers
 * that hold a Sequelize transaction: the statement text is the same one plain-pg callers run. Inside
 * a transaction on a real PostgreSQL it runs as the named prepared statement on the transaction's
 * client, planned once per connection as on the plain pool (an unnamed one is planned at every run).
 */
export async function sequelizeRows<T extends object>(
  sequelize: Sequelize,
  statement: Statement,
  values: unknown[],
  transaction?: Transaction,
): Promise<T[]> {
  if (transaction && plansGenerically(sequelize)) {
    const config = { name: statement.name, text: statement.text, values };
    return (await clientOf(transaction).query<T & pg.QueryResultRow>(config)).rows;
  }
  return sequelize.query<T>(statement.text, {
    // Sequelize refuses an undefined bind value; SQL's is NULL.
    bind: values.map((value) => value ?? null),
    type: QueryTypes.SELECT,
    transaction,
  });
}
