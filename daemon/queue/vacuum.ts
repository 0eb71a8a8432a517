// VACUUM of the queue tables as they churn. Every row of mta_spool, jobs and webhook_deliveries is
// inserted, updated two or three times (claimed, marked, retried) and deleted within seconds. Each
// claim's UPDATE leaves an index entry behind in the partial index the claims walk in run_at order
// (mta_spool_due: the new version is no longer 'queued', so it is not a HOT update), and nothing
// removes those entries but VACUUM: new rows go in at the right of the index, and the left pages
// full of dead entries are never split again, where PostgreSQL would prune them. Every claim walked
// them all: in bench:mta the spool's claim took 0.8 ms per statement after 4,200 messages and 2.5 ms
// after 20,600, and kept growing. Autovacuum comes at most once per autovacuum_naptime (a minute by
// default: ~30,000 dead rows at 500 messages a second), and not at all where it is off. A VACUUM of
// the spool after 6,600 messages took 0.12 s (0.04 s of CPU), its TOAST table included; PGlite runs it too.
import type { Sql } from '../db/sql.ts';
import { QUEUE_TABLES_DEAD_ROWS, vacuumStatement } from './sql/vacuum.ts';

export const CHURNING_QUEUE_TABLES = ['mta_spool', 'jobs', 'webhook_deliveries'] as const;
/** Dead rows that make a table worth a VACUUM; fewer cost its claims little. */
export const VACUUM_DEAD_ROWS = 2_000;

/** VACUUMs each queue table with at least `minDead` dead rows; answers the tables it vacuumed. */
export async function vacuumChurnedQueueTables(
  sql: Sql,
  options: { tables?: readonly string[]; minDead?: number } = {},
): Promise<string[]> {
  const tables = options.tables ?? CHURNING_QUEUE_TABLES;
  const minDead = options.minDead ?? VACUUM_DEAD_ROWS;
  const counts = await sql.rows<{ table: string; dead: number }>(QUEUE_TABLES_DEAD_ROWS, [tables]);
  const vacuumed: string[] = [];
  for (const { table, dead } of counts) {
    if (dead < minDead) continue;
    // Not a declared statement: the table is part of the text (an identifier cannot be a parameter).
    await sql.pool.query(vacuumStatement(table));
    vacuumed.push(table);
  }
  return vacuumed;
}
