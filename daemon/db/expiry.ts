// Batched deletes of expired rows for the retention task (modules/retention/enforce.ts), on the tables
// that are no hot table: a hot table's delete is its home's (test/sql-homes.test.ts "HOMES"), and the
// types below refuse those names. Each statement touches at most :batch rows (a replacement, with those
// of `where`) and answers one row each.

/** The tables written once per message, each with its own home; their statements are never built here. */
export type HotTable =
  'email_logs' | 'recipient_outcomes' | 'jobs' | 'failed_jobs' | 'mta_spool' | 'webhook_deliveries' | 'suppressions';

/** `T` unless it is a hot table's name. */
type NotHot<T extends string> = T extends HotTable ? never : T;

/** A history table's (partitioned by month, primary key (id, created_at); ctid repeats across partitions). */
export function expiredHistoryRowsSql<T extends string>(table: NotHot<T>, where: string): string {
  return `DELETE FROM ${table} WHERE (id, created_at) IN (SELECT id, created_at FROM ${table} WHERE ${where} LIMIT :batch)`;
}

/**
 * A plain table's: a row's ctid is unique within it, and `ctid = ANY(ARRAY(…))` is a TID scan of the batch
 * (`ctid IN (subquery)` would join against a scan of the whole table for each batch).
 */
export function agedRowsSql<T extends string>(table: NotHot<T>, where: string): string {
  return `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE ${where} LIMIT :batch)) RETURNING 1 AS id`;
}
