// The statements of email_logs that go through its Sequelize model (EmailLog, ../model.ts): one log at a
// time, read whole as a model — a log's page and resend, an outcome a provider reports, a tracked open,
// click or unsubscribe. The hot paths' plain SQL on the same table sits beside them in this folder, the
// table's home (test/sql-homes.test.ts): callers ask these functions, never the model.
import { cast, col, Op, where, type Sequelize, type Transaction } from 'sequelize';
import type { EmailLog } from '../model.ts';
import { modelsOf } from '../../models.ts';
import type { EmailStatus } from '../../../../shared/constants.ts';

/**
 * The tenant's condition compared as text: no index can serve it, so the planner probes the primary
 * key (or the email_id index) and filters the one row. Compared as a uuid, on a partition whose
 * statistics lag (logs written faster than autovacuum analyzes) it ANDed a bitmap of the tenant's
 * whole (tenant_id, created_at) index with the key's: 68 ms per log at 300,000 logs (issue 27).
 */
export const sameTenant = (tenantId: string) => where(cast(col('tenant_id'), 'text'), tenantId);

/** Log `id` of tenant `tenantId`, or null (another tenant's is not found either). */
export function findTenantLog(sequelize: Sequelize, tenantId: string, id: string): Promise<EmailLog | null> {
  return modelsOf(sequelize).EmailLog.findOne({ where: { id, [Op.and]: [sameTenant(tenantId)] } });
}

/**
 * The columns an outcome reads (recipients, status, the event's payload): not the bodies, which are
 * up to megabytes each and would be fetched and parsed for every outcome (the MTA records one per message).
 */
const OUTCOME_LOG_ATTRIBUTES: string[] = [
  'id',
  'tenantId',
  'messageId',
  'toAddresses',
  'ccAddresses',
  'bccAddresses',
  'subject',
  'tags',
  'metadata',
  'status',
  'error',
];

/** The log an outcome is for, locked FOR UPDATE in `transaction` until it is recorded; null when gone. */
export function lockLogForOutcome(
  sequelize: Sequelize,
  tenantId: string,
  emailId: string,
  transaction: Transaction,
): Promise<EmailLog | null> {
  return modelsOf(sequelize).EmailLog.findOne({
    attributes: OUTCOME_LOG_ATTRIBUTES,
    where: { id: emailId, tenantId },
    transaction,
    lock: transaction.LOCK.UPDATE,
  });
}

/** An outcome's status (and its diagnostic) on the log lockLogForOutcome answered, in the same transaction. */
export async function writeOutcomeStatus(
  log: EmailLog,
  status: EmailStatus,
  error: string | null,
  transaction: Transaction,
): Promise<void> {
  await log.update({ status, error }, { transaction });
}

/** A log by its id alone, for a signed link (the token names it; its signature is the credential). */
export function findLogOfLink(sequelize: Sequelize, emailId: string): Promise<EmailLog | null> {
  return modelsOf(sequelize).EmailLog.findByPk(emailId);
}

/** Log `emailId` of tenant `tenantId` in `transaction` (an unsubscribe's timeline row and event). */
export function findLogIn(
  sequelize: Sequelize,
  tenantId: string,
  emailId: string,
  transaction: Transaction,
): Promise<EmailLog | null> {
  return modelsOf(sequelize).EmailLog.findOne({ where: { id: emailId, tenantId }, transaction });
}
