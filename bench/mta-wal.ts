// What one delivered message costs PostgreSQL during a bench:mta run (issue 51 §4, docs/mta.md "Several
// worker nodes"): statements and WAL bytes per message from pg_stat_statements (per statement, this
// database only), the WAL the cluster wrote (pg_current_wal_lsn() before and after: every database's,
// so run it on a PostgreSQL of its own), and the rows written per table (pg_stat_user_tables).
// pg_stat_statements must be in shared_preload_libraries; without it only the WAL and row counts are given.
import { QueryTypes, type Sequelize } from 'sequelize';

export interface DatabaseCost {
  messages: number;
  /** Every top-level statement of this database (null without pg_stat_statements). */
  statementsPerMessage: number | null;
  /** PostgreSQL's execution time of those statements (ms per message). */
  executionMsPerMessage: number | null;
  /** WAL of this database's statements (pg_stat_statements' wal_bytes; commit records not included). */
  statementWalBytesPerMessage: number | null;
  /** The cluster's WAL between the two readings (every database, commit records included). */
  clusterWalBytesPerMessage: number;
  /** The statements that ran most per message, with their WAL bytes per call. */
  topStatements: Array<{ query: string; perMessage: number; walBytesPerCall: number; msPerCall: number }>;
  /** Rows inserted, updated and deleted per message, per table. */
  rowsPerMessage: Record<string, { inserted: number; updated: number; deleted: number }>;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

interface TableRow {
  table: string;
  ins: string;
  upd: string;
  del: string;
}

async function tableRows(sequelize: Sequelize): Promise<Map<string, TableRow>> {
  // Every backend's counts reach the view at its next report (PGSTAT_MIN_INTERVAL, 1 s) or transaction end.
  const rows = await sequelize.query<TableRow>(
    `SELECT relname AS table, n_tup_ins::text AS ins, n_tup_upd::text AS upd, n_tup_del::text AS del FROM pg_stat_user_tables`,
    { type: QueryTypes.SELECT },
  );
  return new Map(rows.map((row) => [row.table, row]));
}

async function walLsn(sequelize: Sequelize): Promise<string> {
  const [row] = await sequelize.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn', {
    type: QueryTypes.SELECT,
  });
  return row.lsn;
}

/** Starts measuring; `done(messages)` answers the cost per message of what ran in between. */
export async function databaseCost(sequelize: Sequelize): Promise<{ done(messages: number): Promise<DatabaseCost> }> {
  let statements = true;
  try {
    await sequelize.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await sequelize.query('SELECT pg_stat_statements_reset()');
  } catch {
    statements = false;
  }
  const lsnBefore = await walLsn(sequelize);
  const rowsBefore = await tableRows(sequelize);
  return {
    async done(messages) {
      // Let the backends report their table counts (at most once a second each).
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const lsnAfter = await walLsn(sequelize);
      const [{ bytes }] = await sequelize.query<{ bytes: string }>(
        'SELECT pg_wal_lsn_diff(:after, :before)::text AS bytes',
        { replacements: { after: lsnAfter, before: lsnBefore }, type: QueryTypes.SELECT },
      );
      const rowsAfter = await tableRows(sequelize);
      const rowsPerMessage: DatabaseCost['rowsPerMessage'] = {};
      for (const [table, after] of rowsAfter) {
        const before = rowsBefore.get(table);
        const delta = (field: 'ins' | 'upd' | 'del') => Number(after[field]) - Number(before?.[field] ?? 0);
        const [inserted, updated, deleted] = [delta('ins'), delta('upd'), delta('del')];
        if (inserted + updated + deleted > 0)
          rowsPerMessage[table] = {
            inserted: round(inserted / messages),
            updated: round(updated / messages),
            deleted: round(deleted / messages),
          };
      }
      let statementsPerMessage: number | null = null;
      let executionMsPerMessage: number | null = null;
      let statementWalBytesPerMessage: number | null = null;
      let topStatements: DatabaseCost['topStatements'] = [];
      if (statements) {
        const rows = await sequelize.query<{ query: string; calls: string; wal: string; ms: number }>(
          // Top-level statements only (with pg_stat_statements.track = all, the foreign-key checks inside them
          // are counted too, and their WAL is their statement's).
          `SELECT s.query, s.calls::text AS calls, s.wal_bytes::text AS wal, s.total_exec_time AS ms
             FROM pg_stat_statements s
            WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND s.toplevel
            ORDER BY s.calls DESC`,
          { type: QueryTypes.SELECT },
        );
        const calls = rows.reduce((sum, row) => sum + Number(row.calls), 0);
        const wal = rows.reduce((sum, row) => sum + Number(row.wal), 0);
        statementsPerMessage = round(calls / messages);
        executionMsPerMessage = round(rows.reduce((sum, row) => sum + row.ms, 0) / messages, 3);
        statementWalBytesPerMessage = Math.round(wal / messages);
        topStatements = rows.slice(0, 12).map((row) => ({
          query: row.query.replace(/\s+/g, ' ').slice(0, 160),
          perMessage: round(Number(row.calls) / messages, 3),
          walBytesPerCall: Math.round(Number(row.wal) / Math.max(1, Number(row.calls))),
          msPerCall: round(row.ms / Math.max(1, Number(row.calls)), 3),
        }));
      }
      return {
        messages,
        statementsPerMessage,
        executionMsPerMessage,
        statementWalBytesPerMessage,
        clusterWalBytesPerMessage: Math.round(Number(bytes) / messages),
        topStatements,
        rowsPerMessage,
      };
    },
  };
}
