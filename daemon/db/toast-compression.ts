// How PostgreSQL compresses the large values the service writes: lz4 rather than the default pglz.
// Every message is written two or three times in full (its log's bodies, the outbound spool's signed
// copy, a captured copy) and read back at least once; with pglz, compressing 100 KB costs ~4.7 ms of
// the database's CPU and lz4 ~0.65 ms at about the same size (psql on the 2 × AMD EPYC machine,
// 500 bodies of 108 KB). In bench:mta (issue 28) PostgreSQL took ~8 ms of CPU per delivered message,
// more than a third of the machine. Values already stored keep their method; reads handle both.
// A PostgreSQL built without lz4 (PGlite, the embedded database) keeps pglz.
import { QueryTypes, type Sequelize } from 'sequelize';
import { listPartitions } from './partitions.ts';

export type ToastCompression = 'lz4' | 'pglz';

/** The columns whose values are large enough to be compressed (over ~2 kB), by table. */
export const LARGE_VALUE_COLUMNS: Record<string, readonly string[]> = {
  email_logs: ['html_body', 'text_body', 'attachments', 'headers', 'data', 'metadata', 'sent_headers'],
  captured_messages: ['raw'],
  mta_spool: ['message'],
  template_versions: ['html_body', 'text_body', 'jsx'],
  scheduled_emails: ['payload'],
  idempotency_keys: ['response'],
  email_events: ['data'],
  events: ['data'],
  webhook_deliveries: ['response_body'],
};

/**
 * Large values of the inbound mail (migration 0476, issue 52 §5): an `inbound.received` webhook body
 * carries the message's text, HTML and small attachments inline (bench:inbound's: ~48 KB), and pglz
 * spent ~3.5 ms of the database's CPU per such payload for nothing (49.3 KB stored; lz4: ~1.3 ms,
 * 45.7 KB; psql on a loaded 2-core machine). The parsed form of the message likewise.
 * Apart from LARGE_VALUE_COLUMNS because migration 0410 sets those, before these tables existed.
 */
export const INBOUND_LARGE_VALUE_COLUMNS: Record<string, readonly string[]> = {
  webhook_deliveries: ['payload'],
  inbound_messages: ['parsed'],
};

/** Whether this PostgreSQL was built with lz4 (a value of default_toast_compression it accepts). */
export async function lz4Available(sequelize: Sequelize): Promise<boolean> {
  const [row] = await sequelize.query<{ lz4: boolean }>(
    `SELECT coalesce('lz4' = ANY (enumvals), false) AS lz4 FROM pg_settings WHERE name = 'default_toast_compression'`,
    { type: QueryTypes.SELECT },
  );
  return row?.lz4 ?? false;
}

/**
 * Sets the compression of `tables`' columns (LARGE_VALUE_COLUMNS unless given) on each table and on each of its partitions (ALTER on a
 * partitioned table sets only what its new partitions inherit). A catalogue change: nothing stored
 * is rewritten. Returns the tables changed; none when lz4 is asked for and this PostgreSQL lacks it.
 */
export async function setLargeValueCompression(
  sequelize: Sequelize,
  method: ToastCompression,
  tables: Record<string, readonly string[]> = LARGE_VALUE_COLUMNS,
): Promise<string[]> {
  if (method === 'lz4' && !(await lz4Available(sequelize))) return [];
  const changed: string[] = [];
  for (const [table, columns] of Object.entries(tables)) {
    const alter = columns.map((column) => `ALTER COLUMN ${column} SET COMPRESSION ${method}`).join(', ');
    for (const name of [table, ...(await listPartitions(sequelize, table))])
      await sequelize.query(`ALTER TABLE ONLY ${name} ${alter}`);
    changed.push(table);
  }
  return changed;
}
