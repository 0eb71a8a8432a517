// What a send's log records when its message is spooled for the outbound MTA: the spool transport
// (transport.ts) is handed it, the spool's INSERT keeps it in mta_spool's log_* columns
// (mta/sql/spooled-log-columns.ts), and the log's first outcome writes it (modules/emails/sql/spooled-log.ts).

/**
 * What the spool's statement keeps for the log of the message it spools, as RECORD_OUTCOMES' LogOutcome
 * names them (createdAt is the log's partition key; subject, html and text a template's rendered content,
 * absent: the log's own), the attempt as it counts it, and the headers sent.
 */
export interface SpooledLog {
  createdAt: string;
  subject?: string | null;
  html?: string | null;
  text?: string | null;
  attempt: number | null;
  sentHeaders: string;
}
