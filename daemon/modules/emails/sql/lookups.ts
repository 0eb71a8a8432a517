// Reads of one email log by other modules (inbound mail and provider reports): the log a bounce, a
// report or a VERP address names. Declared statements run through Sequelize (the callers' handle), or, for the
// MTA's batch commit, through the runner its transaction was given (Sql.inTransaction).
import type { Sequelize, Transaction } from 'sequelize';
import { declare, sequelizeRows, type TransactionStatements } from '../../../db/sql.ts';

const RECIPIENTS_OF_LOG = declare(
  'emails.recipients-of-log',
  `SELECT to_addresses, cc_addresses, bcc_addresses FROM email_logs WHERE id = $1`,
);

/** Every recipient of the log (to, cc, bcc); none when there is no such log. */
export async function recipientsOfLog(sequelize: Sequelize, emailId: string): Promise<string[]> {
  const [row] = await sequelizeRows<{ to_addresses: string[]; cc_addresses: string[]; bcc_addresses: string[] }>(
    sequelize,
    RECIPIENTS_OF_LOG,
    [emailId],
  );
  return row ? [...row.to_addresses, ...row.cc_addresses, ...row.bcc_addresses] : [];
}

const SENDER_OF_LOG = declare('emails.sender-of-log', `SELECT tenant_id, from_address FROM email_logs WHERE id = $1`);

/** The log's tenant and sender (a VERP bounce address names the log); null when there is no such log. */
export async function senderOfLog(
  sequelize: Sequelize,
  emailId: string,
): Promise<{ tenant_id: string; from_address: string } | null> {
  const [row] = await sequelizeRows<{ tenant_id: string; from_address: string }>(sequelize, SENDER_OF_LOG, [emailId]);
  return row ?? null;
}

/** A log as a provider's report is matched against it. */
export interface ReportedLog {
  id: string;
  tenant_id: string;
  to_addresses: string[];
  cc_addresses: string[] | null;
  bcc_addresses: string[] | null;
}

const REPORTED_LOG_COLUMNS = 'id, tenant_id, to_addresses, cc_addresses, bcc_addresses';
const REPORTED_LOG_BY_ID = declare(
  'emails.reported-log-by-id',
  `SELECT ${REPORTED_LOG_COLUMNS} FROM email_logs WHERE id = $1`,
);
const REPORTED_LOGS_BY_MESSAGE_ID = declare(
  'emails.reported-logs-by-message-id',
  `SELECT ${REPORTED_LOG_COLUMNS} FROM email_logs WHERE message_id = ANY($1::text[])`,
);

/** The log a report names by its email id, else every log carrying one of `messageIds`. */
export async function logsOfReport(
  sequelize: Sequelize,
  report: { emailId?: string | null; messageIds: string[] },
  transaction?: Transaction,
): Promise<ReportedLog[]> {
  return report.emailId
    ? sequelizeRows<ReportedLog>(sequelize, REPORTED_LOG_BY_ID, [report.emailId], transaction)
    : sequelizeRows<ReportedLog>(sequelize, REPORTED_LOGS_BY_MESSAGE_ID, [report.messageIds], transaction);
}

/** A log as a batch of outcomes reads it (emails/outcomes.ts recordDeliveryOutcomes): no bodies. */
export interface OutcomeLogRow {
  id: string;
  tenant_id: string;
  /** As text: a JavaScript Date would drop the microseconds RECORD_OUTCOMES matches the row on. */
  created_at: string;
  message_id: string;
  to_addresses: string[];
  cc_addresses: string[] | null;
  bcc_addresses: string[] | null;
  subject: string;
  tags: string[];
  metadata: Record<string, unknown> | null;
  status: string;
  error: string | null;
}

// Locked in id order, so two batches that share logs wait for each other instead of deadlocking. The
// tenant is compared as text (as emails/logs.ts does): an index on it would invite a BitmapAnd with the
// primary key on a partition with lagging statistics, where the id alone finds the one row.
const OUTCOME_LOGS_FOR_UPDATE = declare(
  'emails.outcome-logs-for-update',
  `SELECT l.id, l.tenant_id, l.created_at::text AS created_at, l.message_id, l.to_addresses, l.cc_addresses, l.bcc_addresses,
          l.subject, l.tags, l.metadata, l.status, l.error
     FROM unnest($1::uuid[], $2::text[]) AS o(id, tenant_id)
     JOIN email_logs l ON l.id = o.id AND l.tenant_id::text = o.tenant_id
    ORDER BY l.id
      FOR UPDATE OF l`,
);

/** The logs named by (id, tenant) pairs, locked for the caller's transaction; a pair with no log is left out. */
export async function lockOutcomeLogs(
  run: TransactionStatements,
  owners: { emailId: string; tenantId: string }[],
): Promise<OutcomeLogRow[]> {
  if (owners.length === 0) return [];
  return run<OutcomeLogRow>(OUTCOME_LOGS_FOR_UPDATE, [owners.map((o) => o.emailId), owners.map((o) => o.tenantId)]);
}
