// The spool's columns that carry what the log of a spooled message records (migration 0440): written
// by the spool's INSERT (spool-insert.ts), read into email_logs with the first outcome by the log's own
// statements (modules/emails/sql/spooled-log.ts). In mta/ because they are mta_spool's columns.
import type { SpooledLog } from '../../mail/spooled-log.ts';

/** The spool's columns that hold a SpooledLog (migration 0440): each one's parameter type and value. */
const SPOOLED_LOG_FIELDS: ReadonlyArray<{ column: string; type: string; of: (log: SpooledLog) => unknown }> = [
  { column: 'log_created_at', type: 'timestamptz', of: (log) => log.createdAt },
  { column: 'log_attempt', type: 'int', of: (log) => log.attempt },
  { column: 'log_sent_headers', type: 'text', of: (log) => log.sentHeaders },
  { column: 'log_subject', type: 'text', of: (log) => log.subject },
  { column: 'log_html', type: 'text', of: (log) => log.html },
  { column: 'log_text', type: 'text', of: (log) => log.text },
];

/** The spool's columns that hold a SpooledLog, in spooledLogValues' order. */
export const SPOOLED_LOG_COLUMNS = SPOOLED_LOG_FIELDS.map((field) => field.column);

/** SpooledLog's values in SPOOLED_LOG_COLUMNS' order (all null for mail without a log). */
export function spooledLogValues(log: SpooledLog | null): unknown[] {
  return SPOOLED_LOG_FIELDS.map((field) => (log ? (field.of(log) ?? null) : null));
}

/** The fields as arrays (one entry per message), from parameter `first` on, cast as the spool's INSERT unnests them. */
export function spooledLogArraysSql(first: number): string {
  return SPOOLED_LOG_FIELDS.map((field, index) => `$${first + index}::${field.type}[]`).join(', ');
}
