// Reads of one email log by other modules (inbound mail and provider reports): the log a bounce, a
// report or a VERP address names. Declared statements run through Sequelize (the callers' handle).
import type { Sequelize, Transaction } from 'sequelize';
import { declare, sequelizeRows } from '../../../db/sql.ts';

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
