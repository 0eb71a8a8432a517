// The statements on suppressions (migration 0009 and later), the table's home (test/sql-homes.test.ts):
// the check of every send (suppressedAmong; the accept and campaign statements embed noneSuppressedSql),
// the automatic entries of bounces, complaints and unsubscribes (suppressAddress), and the API's list,
// add and remove through the Sequelize model. Addresses are stored and compared lower-cased.
import { Op, QueryTypes, type Sequelize, type Transaction, type WhereOptions } from 'sequelize';
import type { Suppression, SuppressionReason } from '../model.ts';
import { modelsOf } from '../../models.ts';
import { findPage, type Page } from '../../../db/paging.ts';

/**
 * SQL condition, true when tenant `tenant` suppresses none of `emails` (SQL expressions: a uuid, and a
 * text[] or one text), for statements that check it inline on their hot path (the accept, a campaign's chunk).
 */
export function noneSuppressedSql(tenant: string, emails: { any: string } | { one: string }): string {
  const match = 'any' in emails ? `s.email = ANY(${emails.any})` : `s.email = ${emails.one}`;
  return `NOT EXISTS (SELECT 1 FROM suppressions s WHERE s.tenant_id = ${tenant} AND ${match})`;
}

/** The subset of `addresses` (lower-cased) that the tenant suppresses. One query. */
export async function suppressedAmong(
  sequelize: Sequelize,
  tenantId: string,
  addresses: string[],
  transaction?: Transaction,
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const rows = await sequelize.query<{ email: string }>(
    `SELECT email FROM suppressions WHERE tenant_id = :tenantId AND email IN (:addresses)`,
    {
      replacements: { tenantId, addresses: [...new Set(addresses.map((a) => a.toLowerCase()))] },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return new Set(rows.map((r) => r.email));
}

/** Adds (or keeps) a suppression; used by bounces, complaints and unsubscribes inside their transaction. */
export async function suppressAddress(
  sequelize: Sequelize,
  entry: {
    tenantId: string;
    email: string;
    reason: SuppressionReason;
    emailId?: string | null;
    detail?: string | null;
  },
  transaction?: Transaction,
): Promise<boolean> {
  const rows = await sequelize.query(
    `INSERT INTO suppressions (tenant_id, email, reason, email_id, detail) VALUES (:tenantId, :email, :reason, :emailId, :detail)
     ON CONFLICT (tenant_id, email) DO NOTHING RETURNING id`,
    {
      replacements: {
        tenantId: entry.tenantId,
        email: entry.email.toLowerCase(),
        reason: entry.reason,
        emailId: entry.emailId ?? null,
        detail: entry.detail?.slice(0, 1000) ?? null,
      },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  return rows.length > 0;
}

/** A page of the tenant's suppressions, newest first, each mapped by `view`. */
export function findSuppressionPage<T>(
  sequelize: Sequelize,
  tenantId: string,
  query: { page?: number; limit?: number; email?: string; reason?: SuppressionReason },
  view: (row: Suppression) => T,
): Promise<Page<T>> {
  const where: WhereOptions<Suppression> = { tenantId };
  if (query.email) Object.assign(where, { email: query.email.toLowerCase() });
  if (query.reason) Object.assign(where, { reason: query.reason });
  return findPage(
    modelsOf(sequelize).Suppression,
    {
      where,
      order: [
        ['createdAt', 'DESC'],
        ['id', 'ASC'],
      ],
    },
    query,
    (rows) => rows.map(view),
  );
}

/** The tenant's suppression of `email` (lower-cased), or null. */
export function findSuppression(sequelize: Sequelize, tenantId: string, email: string): Promise<Suppression | null> {
  return modelsOf(sequelize).Suppression.findOne({ where: { tenantId, email } });
}

/** A suppression added by hand (`email` lower-cased); throws Sequelize's unique error when one exists. */
export function insertSuppression(
  sequelize: Sequelize,
  tenantId: string,
  email: string,
  reason: SuppressionReason,
): Promise<Suppression> {
  return modelsOf(sequelize).Suppression.create({ tenantId, email, reason, detail: 'added through the API' });
}

/** Removes the tenant's suppression by address (`email` lower-cased) or id; answers how many went. */
export function removeSuppression(
  sequelize: Sequelize,
  tenantId: string,
  which: { email: string } | { id: string },
): Promise<number> {
  return modelsOf(sequelize).Suppression.destroy({
    where: 'email' in which ? { tenantId, email: which.email } : { tenantId, id: { [Op.eq]: which.id } },
  });
}
