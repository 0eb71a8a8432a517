// Monthly range partitions on created_at for the history tables (email_logs, email_events,
// captured_messages, events, webhook_deliveries): expiring a month of history is a DROP TABLE of one
// partition (no dead rows, no vacuum debt), and a query bounded in time reads only its months.
// Partitions are named <table>_pYYYY_MM and cover [first of the month, first of the next) in UTC;
// <table>_default catches any row outside them (a clock far off), so an insert never fails.
// Used by the migrations that partition the tables and by the retention task (maintenance worker).
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/** The tables partitioned by month; each has created_at, and its primary key is (id, created_at). */
export const PARTITIONED_TABLES = [
  'email_logs',
  'email_events',
  'captured_messages',
  'events',
  'webhook_deliveries',
] as const;
/** Partitioned from their creation (migration 0471): the messages inbound routes took (issue 52). */
export const INBOUND_PARTITIONED_TABLES = ['inbound_messages'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number] | (typeof INBOUND_PARTITIONED_TABLES)[number];

/**
 * Tables whose rows belong to a history table's rows (a log's tags, migration 0430), partitioned by
 * the same months: their partitions are created and dropped with the history table's, and their rows
 * deleted with its rows (retention/enforce.ts).
 */
export const MONTHLY_COMPANIONS: Record<PartitionedTable, readonly string[]> = {
  email_logs: ['email_log_tags'],
  email_events: [],
  captured_messages: [],
  events: [],
  webhook_deliveries: [],
  inbound_messages: ['inbound_attachments'],
};

/** How many months ahead of the current one partitions exist (created by migration and maintenance). */
export const MONTHS_AHEAD = 2;

const NAME = /_p(\d{4})_(\d{2})$/;

export interface Month {
  year: number;
  /** 1–12 */
  month: number;
}

export function monthOf(date: Date): Month {
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1 };
}

export function addMonths(m: Month, count: number): Month {
  const index = m.year * 12 + (m.month - 1) + count;
  return { year: Math.floor(index / 12), month: (index % 12) + 1 };
}

function monthStart(m: Month): string {
  return `${m.year}-${String(m.month).padStart(2, '0')}-01 00:00:00+00`;
}

export function partitionName(table: string, m: Month): string {
  return `${table}_p${m.year}_${String(m.month).padStart(2, '0')}`;
}

/** The month a partition name covers, or null for the default partition. */
export function monthOfPartition(name: string): Month | null {
  const match = NAME.exec(name);
  return match ? { year: Number(match[1]), month: Number(match[2]) } : null;
}

/** Statements creating the partition of a month on a table that has no rows of that month in its default. */
export function createPartitionSql(table: string, m: Month, parent = table): string {
  return `CREATE TABLE IF NOT EXISTS ${partitionName(table, m)} PARTITION OF ${parent}
    FOR VALUES FROM ('${monthStart(m)}') TO ('${monthStart(addMonths(m, 1))}')`;
}

export async function listPartitions(sequelize: Sequelize, table: string): Promise<string[]> {
  const rows = await sequelize.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = CAST(:table AS regclass) ORDER BY 1`,
    { type: QueryTypes.SELECT, replacements: { table } },
  );
  return rows.map((row) => row.name);
}

/**
 * GIN indexes of the partitions without a pending list (fastupdate = off), flushed. With the default,
 * each insert appends its keys to a list of up to gin_pending_list_limit (4 MB) that every search
 * reads whole: logs written through the API kept it full, and one recipient search read 480 pages
 * (51,000 pending keys) to find 4 rows, 8 ms in PostgreSQL and 0.9–1.6 s over HTTP at 1,000,000 logs
 * under load (bench:scale, issue 27). An insert now puts its few keys in the tree itself. A
 * partitioned index takes no ALTER … SET, so each partition's index is set (migration 0400) and each
 * new partition's when it is created (ensurePartitions).
 */
export async function turnOffGinPendingLists(sequelize: Sequelize, transaction?: Transaction): Promise<string[]> {
  const indexes = await sequelize.query<{ name: string }>(
    `SELECT quote_ident(n.nspname) || '.' || quote_ident(ic.relname) AS name
       FROM pg_index x
       JOIN pg_class ic ON ic.oid = x.indexrelid
       JOIN pg_am am ON am.oid = ic.relam AND am.amname = 'gin'
       JOIN pg_namespace n ON n.oid = ic.relnamespace
       JOIN pg_inherits i ON i.inhrelid = x.indrelid
       JOIN pg_class parent ON parent.oid = i.inhparent
      WHERE parent.relname IN (:tables) AND ic.relkind = 'i'
        AND NOT coalesce(ic.reloptions @> ARRAY['fastupdate=off'], false)
      ORDER BY 1`,
    { type: QueryTypes.SELECT, replacements: { tables: [...PARTITIONED_TABLES] }, transaction },
  );
  for (const { name } of indexes) {
    await sequelize.query(`ALTER INDEX ${name} SET (fastupdate = off)`, { transaction });
    await sequelize.query(`SELECT gin_clean_pending_list(CAST(:name AS regclass))`, {
      replacements: { name },
      transaction,
    });
  }
  return indexes.map(({ name }) => name);
}

/**
 * Creates the missing partitions from this month to MONTHS_AHEAD months ahead, the table's and its
 * MONTHLY_COMPANIONS'. Rows of such a month that landed in the default partition move into the new
 * partition in the same transaction (PostgreSQL refuses to create a partition whose rows sit in the
 * default).
 */
export async function ensurePartitions(
  sequelize: Sequelize,
  table: PartitionedTable,
  now = new Date(),
): Promise<string[]> {
  const created: string[] = [];
  for (const name of [table, ...MONTHLY_COMPANIONS[table]]) created.push(...(await ensureMonths(sequelize, name, now)));
  if (created.length > 0) await turnOffGinPendingLists(sequelize);
  return created;
}

async function ensureMonths(sequelize: Sequelize, table: string, now: Date): Promise<string[]> {
  const existing = new Set(await listPartitions(sequelize, table));
  const created: string[] = [];
  for (let i = 0; i <= MONTHS_AHEAD; i += 1) {
    const m = addMonths(monthOf(now), i);
    const name = partitionName(table, m);
    if (existing.has(name)) continue;
    const range = `created_at >= '${monthStart(m)}' AND created_at < '${monthStart(addMonths(m, 1))}'`;
    await sequelize.transaction(async (transaction) => {
      await sequelize.query(`SET LOCAL lock_timeout = '5s'`, { transaction });
      const [stray] = await sequelize.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table}_default WHERE ${range}`,
        { type: QueryTypes.SELECT, transaction },
      );
      if (stray.n === 0) {
        await sequelize.query(createPartitionSql(table, m), { transaction });
        return;
      }
      await sequelize.query(
        `CREATE TABLE ${name} (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMPRESSION);
         WITH moved AS (DELETE FROM ${table}_default WHERE ${range} RETURNING *) INSERT INTO ${name} SELECT * FROM moved;
         ALTER TABLE ${table} ATTACH PARTITION ${name} FOR VALUES FROM ('${monthStart(m)}') TO ('${monthStart(addMonths(m, 1))}')`,
        { transaction },
      );
    });
    created.push(name);
  }
  return created;
}

/**
 * Drops the partitions whose whole month ended before `cutoff`, the table's and its
 * MONTHLY_COMPANIONS'. DROP TABLE takes a brief exclusive lock on the parent: lock_timeout keeps it
 * from queueing behind a long query (and everyone behind it); a partition that could not be dropped
 * is tried again on the next run.
 */
export async function dropPartitionsBefore(
  sequelize: Sequelize,
  table: PartitionedTable,
  cutoff: Date,
): Promise<string[]> {
  const dropped: string[] = [];
  const partitions = [table, ...MONTHLY_COMPANIONS[table]].map((name) => listPartitions(sequelize, name));
  for (const name of (await Promise.all(partitions)).flat()) {
    const m = monthOfPartition(name);
    if (!m) continue;
    const end = addMonths(m, 1);
    if (Date.UTC(end.year, end.month - 1, 1) > cutoff.getTime()) continue;
    await sequelize.transaction(async (transaction) => {
      await sequelize.query(`SET LOCAL lock_timeout = '2s'`, { transaction });
      await sequelize.query(`DROP TABLE IF EXISTS ${name}`, { transaction });
    });
    dropped.push(name);
  }
  return dropped;
}

/**
 * The statements turning a plain table into a monthly partitioned one with the same columns and
 * rows, run as one implicit transaction by the migration. `rebuild` restores the constraints
 * PostgreSQL does not copy with LIKE (primary key, foreign keys) and the indexes.
 */
export async function partitionTableSql(
  sequelize: Sequelize,
  table: PartitionedTable,
  rebuild: string,
): Promise<string> {
  const [range] = await sequelize.query<{ first: Date | null }>(`SELECT min(created_at) AS first FROM ${table}`, {
    type: QueryTypes.SELECT,
  });
  const now = new Date();
  const months: Month[] = [];
  const first = range.first ? monthOf(new Date(range.first)) : monthOf(now);
  const last = addMonths(monthOf(now), MONTHS_AHEAD);
  for (let m = first; m.year * 12 + m.month <= last.year * 12 + last.month; m = addMonths(m, 1)) months.push(m);
  return [
    `CREATE TABLE ${table}_partitioned (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (created_at)`,
    ...months.map((m) => createPartitionSql(table, m, `${table}_partitioned`)),
    `CREATE TABLE ${table}_default PARTITION OF ${table}_partitioned DEFAULT`,
    `INSERT INTO ${table}_partitioned SELECT * FROM ${table}`,
    `DROP TABLE ${table} CASCADE`,
    `ALTER TABLE ${table}_partitioned RENAME TO ${table}`,
    rebuild,
  ].join(';\n');
}

/** The reverse: one plain table with every row, rebuilt with `rebuild` (constraints and indexes). */
export function unpartitionTableSql(table: PartitionedTable, rebuild: string): string {
  return [
    `CREATE TABLE ${table}_plain (LIKE ${table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`,
    `INSERT INTO ${table}_plain SELECT * FROM ${table}`,
    `DROP TABLE ${table} CASCADE`,
    `ALTER TABLE ${table}_plain RENAME TO ${table}`,
    rebuild,
  ].join(';\n');
}
