// The SQL of the live email log (GET /emails/logs/stream, ../log-stream.ts): the latest rows of a
// tenant and the rows changed since a cursor, ordered by (updated_at, id).
import { QueryTypes, type Sequelize } from 'sequelize';
import { LOG_ROW_COLUMNS, type LogRowFields } from './log-columns.ts';

const MAX_ROWS_PER_POLL = 500;
const COMMIT_OVERLAP_MS = 5000;

export interface LogChangeRow extends LogRowFields {
  updated_at: Date | string;
  /** updated_at as PostgreSQL prints it: keeps the microseconds a JS Date would drop. */
  cursor: string;
}

/** Where a stream stands: the last row it sent, ordered by (updated_at, id). */
export interface StreamCursor {
  at: string;
  id: string;
}

const COLUMNS = `${LOG_ROW_COLUMNS}, updated_at, updated_at::text AS cursor`;

/** The tenant's `count` most recently changed logs, oldest first. */
export async function latestLogs(sequelize: Sequelize, tenantId: string, count: number): Promise<LogChangeRow[]> {
  if (count === 0) return [];
  const rows = await sequelize.query<LogChangeRow>(
    `SELECT ${COLUMNS} FROM email_logs WHERE tenant_id = :tenantId ORDER BY updated_at DESC, id DESC LIMIT :count`,
    { type: QueryTypes.SELECT, replacements: { tenantId, count } },
  );
  return rows.reverse();
}

/**
 * The rows changed at or a little before the cursor (the overlap below), and those after it. Both
 * bound (updated_at, id) by row comparisons, which the (tenant_id, updated_at, id) index takes as
 * its range: written as `updated_at > :at OR (updated_at = :at AND id > :id)` the bound was a filter,
 * and where the planner had no statistics for the rows just written (a new month, or a drain that had
 * just rewritten them) each poll walked the tenant's whole index: 11 s per poll at 10 M logs.
 * Replacements: tenantId, at, id, overlap (s), limit.
 */
export const LOG_CHANGES_LATE_SQL = `SELECT ${COLUMNS} FROM email_logs
  WHERE tenant_id = :tenantId
    AND (updated_at, id) >= (CAST(:at AS timestamptz) - make_interval(secs => :overlap), '00000000-0000-0000-0000-000000000000'::uuid)
    AND (updated_at, id) <= (CAST(:at AS timestamptz), CAST(:id AS uuid))
  ORDER BY updated_at, id LIMIT :limit`;
export const LOG_CHANGES_AFTER_SQL = `SELECT ${COLUMNS} FROM email_logs
  WHERE tenant_id = :tenantId AND (updated_at, id) > (CAST(:at AS timestamptz), CAST(:id AS uuid))
  ORDER BY updated_at, id LIMIT :limit`;

/**
 * Rows changed after the cursor, plus those of a short overlap before it: updated_at is set
 * before the writing transaction commits, so a row can become visible with a time a previous poll
 * already passed. The caller skips what it has sent.
 */
export async function logChangesSince(
  sequelize: Sequelize,
  tenantId: string,
  cursor: StreamCursor,
): Promise<LogChangeRow[]> {
  const replacements = {
    tenantId,
    at: cursor.at,
    id: cursor.id,
    overlap: COMMIT_OVERLAP_MS / 1000,
    limit: MAX_ROWS_PER_POLL,
  };
  const [late, after] = await Promise.all([
    sequelize.query<LogChangeRow>(LOG_CHANGES_LATE_SQL, { type: QueryTypes.SELECT, replacements }),
    sequelize.query<LogChangeRow>(LOG_CHANGES_AFTER_SQL, { type: QueryTypes.SELECT, replacements }),
  ]);
  return [...late, ...after];
}

/** The database's clock as it prints timestamps, so a fresh cursor compares with updated_at::text. */
export async function databaseNow(sequelize: Sequelize): Promise<string> {
  const [row] = await sequelize.query<{ now: string }>('SELECT now()::text AS now', { type: QueryTypes.SELECT });
  return row.now;
}
