// Plain SQL on `pg` for the hot paths (accept, claim, deliver, record outcomes, webhook fan-out and
// delivery). Sequelize stays for the CRUD modules, where it reads best; a statement that runs once
// per message goes through here instead, because Sequelize's query building, replacement escaping
// and model hydration cost more CPU than the statement itself (see bench/ and the README).
//
// A statement is declared once, as a constant with a stable name, and run as a named prepared
// statement: PostgreSQL parses and plans it once per connection. The embedded PGlite serves every
// client from ONE backend session, where a name prepared by one connection collides with the same
// name prepared by another, so there statements run unnamed (parsed each time; still no Sequelize).
//
// Each is planned once per connection, generically (HOT_PATH_SETTINGS), on this pool's connections
// and in the transactions that run declared statements on a Sequelize client (Sql.inTransaction).
import pg from 'pg';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

export interface Statement {
  /** Unique across the daemon; PostgreSQL keys the prepared plan by it. */
  name: string;
  text: string;
  /**
   * Planned at each run with its values (force_custom_plan for that run), not once per connection:
   * for a statement run once per many rows, whose best plan depends on how big the tables have
   * grown since the connection first ran it (see declare's `planEachRun`).
   */
  planEachRun?: boolean;
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
  /**
   * Declared statements in a Sequelize transaction, run as this pool runs them (named, planned once
   * per connection with HOT_PATH_SETTINGS, which are set for the rest of the transaction).
   */
  inTransaction(transaction: Transaction): Promise<TransactionStatements>;
  close(): Promise<void>;
}

/** Runs declared statements in one transaction. */
export type TransactionStatements = <T extends object>(statement: Statement, values: unknown[]) => Promise<T[]>;

/**
 * `planEachRun`: plan the statement at every run with its values instead of once per connection. A
 * generic plan is made with the statistics of its first run, and a table empty at that moment (a new
 * install, a bench, autovacuum off) gives every index the same one-row estimate: the planner may then
 * pick an index on a prefix (tenant_id) and filter, reading every row of the tenant at each run for the
 * connection's life. For a statement that runs once per up to 1,000 rows, one plan per run costs a
 * millisecond or two, and its values (array lengths) make the estimate right (issue 51: the contacts
 * bulk statements, measured in daemon/modules/contacts/bulk.ts).
 */
export function declare(name: string, text: string, options: { planEachRun?: boolean } = {}): Statement {
  return options.planEachRun ? { name, text, planEachRun: true } : { name, text };
}

/**
 * How declared statements are planned. Once per connection, generically: they are written so that
 * their plan does not depend on their values, and under the default `plan_cache_mode` (auto)
 * PostgreSQL planned those touching partitioned tables again at every execution (a generic plan's
 * estimate counts every partition, so the custom plan always looked cheaper): 0.5–2 ms each time
 * for the spool's insert and the outcome statements, a fifth of the database's CPU in bench:mta
 * (docs/mta.md). A generic plan is kept for the connection's life with the statistics of the moment
 * it was made, and a queue table or a new month's partition is empty at that moment: the plan would
 * read it whole ever after (in bench:mta, 1,827 sequential scans read 7.7 M rows of email_logs and
 * 3,068 read 4.6 M of jobs). Every declared statement reaches its rows through an index, so
 * sequential scans are off where they run (the planner still scans where no index serves).
 *
 * JIT is off there too: with sequential scans off, a statement that has no index to use (the MTA loops'
 * reload of paused tenants and reaction rules) is costed above 10¹⁰, past every jit_*_above_cost, and
 * PostgreSQL compiled it with LLVM at each run: 130–660 ms for a read of a few rows, every 10 s on every
 * worker node (pg_stat_statements in bench:mta --nodes 2, issue 51 §4).
 */
export const HOT_PATH_SETTINGS = { plan_cache_mode: 'force_generic_plan', enable_seqscan: 'off', jit: 'off' } as const;
const SETTINGS = Object.entries(HOT_PATH_SETTINGS);
const STARTUP_OPTIONS = SETTINGS.map(([name, value]) => `-c ${name}=${value}`).join(' ');
const SET_LOCAL = SETTINGS.map(([name, value]) => `SET LOCAL ${name} = ${value}`).join('; ');
const PLAN_EACH_RUN = 'plan_cache_mode = force_custom_plan';
const PLAN_ONCE = `plan_cache_mode = ${HOT_PATH_SETTINGS.plan_cache_mode}`;

/** Sequelize's transaction runs on one pg client: declared statements join it there. */
export function clientOf(transaction: Transaction): pg.ClientBase {
  return (transaction as unknown as { connection: pg.ClientBase }).connection;
}

export function createSql(url: string, options: { max: number; embedded: boolean }): Sql {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max,
    idleTimeoutMillis: 10_000,
    // PGlite's server takes no startup options: its statements run unnamed, planned each time anyway.
    ...(options.embedded ? {} : { options: STARTUP_OPTIONS }),
  });
  // An idle client that loses its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  const config = (statement: Statement, values: unknown[]): pg.QueryConfig =>
    options.embedded ? { text: statement.text, values } : { name: statement.name, text: statement.text, values };
  // A statement planned at each run (planEachRun) switches its connection to custom plans around it:
  // on a client in a transaction with SET LOCAL (a failure rolls the setting back with the transaction),
  // on the pool on a client of its own, given back to the pool only once it plans generically again.
  const query = async <T extends pg.QueryResultRow>(statement: Statement, values: unknown[], runner: SqlRunner) => {
    if (!statement.planEachRun || options.embedded) return runner.query<T>(config(statement, values));
    if (runner !== pool) {
      await runner.query(`SET LOCAL ${PLAN_EACH_RUN}`);
      const result = await runner.query<T>(config(statement, values));
      await runner.query(`SET LOCAL ${PLAN_ONCE}`);
      return result;
    }
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query(`SET ${PLAN_EACH_RUN}`);
      return await client.query<T>(config(statement, values));
    } finally {
      await client.query(`SET ${PLAN_ONCE}`).catch((error: Error) => (broken = error));
      client.release(broken);
    }
  };
  const rows = async <T extends pg.QueryResultRow>(statement: Statement, values: unknown[], runner: SqlRunner = pool) =>
    (await query<T>(statement, values, runner)).rows;
  return {
    pool,
    rows,
    async count(statement, values, runner = pool) {
      return (await query(statement, values, runner)).rowCount ?? 0;
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
    async inTransaction(transaction) {
      const client = clientOf(transaction);
      await client.query(SET_LOCAL);
      return <T extends object>(statement: Statement, values: unknown[]) =>
        rows<T & pg.QueryResultRow>(statement, values, client);
    },
    close: () => pool.end(),
  };
}

/** Declared statements through Sequelize in `transaction` (sequelizeRows): where no Sql is at hand. */
export function sequelizeStatements(sequelize: Sequelize, transaction: Transaction): TransactionStatements {
  return (statement, values) => sequelizeRows(sequelize, statement, values, transaction);
}

/**
 * Runs a declared statement through Sequelize (bind parameters, not replacements), for the callers
 * that hold a Sequelize transaction: the statement text is the same one plain-pg callers run
 * (unnamed: parsed and planned at every run; Sql.inTransaction runs them as the pool does).
 */
export async function sequelizeRows<T extends object>(
  sequelize: Sequelize,
  statement: Statement,
  values: unknown[],
  transaction?: Transaction,
): Promise<T[]> {
  return sequelize.query<T>(statement.text, {
    // Sequelize refuses an undefined bind value; SQL's is NULL.
    bind: values.map((value) => value ?? null),
    type: QueryTypes.SELECT,
    transaction,
  });
}
