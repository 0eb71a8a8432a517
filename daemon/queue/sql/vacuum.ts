// The dead rows PostgreSQL's statistics count in the queue tables (queue/vacuum.ts).
import { declare } from '../../db/sql.ts';

export const QUEUE_TABLES_DEAD_ROWS = declare(
  'queue.dead-rows',
  `SELECT relname::text AS table, n_dead_tup::bigint::int AS dead
     FROM pg_stat_user_tables
    WHERE schemaname = current_schema() AND relname = ANY($1::text[])`,
);

/** VACUUM of one queue table; SKIP_LOCKED: another node's VACUUM (or autovacuum) at work is enough. */
export function vacuumStatement(table: string): string {
  return `VACUUM (SKIP_LOCKED) "${table.replaceAll('"', '""')}"`;
}
