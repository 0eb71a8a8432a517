// Suppression list: checked on every send, filled by hand and automatically (hard bounces,
// complaints, unsubscribes). Addresses are compared lower-cased.
import { Op, QueryTypes, type Sequelize, type Transaction, type WhereOptions } from 'sequelize';
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { AppDeps } from '../../app-types.ts';
import type { TenantContext } from '../../context.ts';
import { Suppression, type SuppressionReason } from './model.ts';
import { findPage } from '../../db/paging.ts';

export interface SuppressionView {
  id: string;
  email: string;
  reason: SuppressionReason;
  emailId: string | null;
  detail: string | null;
  createdAt: string;
}

function view(row: Suppression): SuppressionView {
  return {
    id: row.id,
    email: row.email,
    reason: row.reason,
    emailId: row.emailId ?? null,
    detail: row.detail ?? null,
    createdAt: row.createdAt.toISOString(),
  };
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

/** What the suppression routes' services take; they use the global models today. */
export type SuppressionDeps = Pick<AppDeps, 'db'>;

export async function listSuppressions(
  _deps: SuppressionDeps,
  ctx: TenantContext,
  query: { page?: number; limit?: number; email?: string; reason?: SuppressionReason },
) {
  const where: WhereOptions<Suppression> = { tenantId: ctx.tenantId };
  if (query.email) Object.assign(where, { email: query.email.toLowerCase() });
  if (query.reason) Object.assign(where, { reason: query.reason });
  return findPage(
    Suppression,
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

export async function createSuppression(
  _deps: SuppressionDeps,
  ctx: TenantContext,
  body: { email: string; reason: SuppressionReason },
): Promise<SuppressionView> {
  const email = body.email.toLowerCase();
  const existing = await Suppression.findOne({ where: { tenantId: ctx.tenantId, email } });
  if (existing)
    throw new ConflictError(`${email} is already suppressed (reason: ${existing.reason}).`, 'ALREADY_SUPPRESSED');
  try {
    return view(
      await Suppression.create({ tenantId: ctx.tenantId, email, reason: body.reason, detail: 'added through the API' }),
    );
  } catch (error) {
    if ((error as { name?: string }).name === 'SequelizeUniqueConstraintError')
      throw new ConflictError(`${email} is already suppressed.`, 'ALREADY_SUPPRESSED');
    throw error;
  }
}

export async function deleteSuppressionByEmail(
  _deps: SuppressionDeps,
  ctx: TenantContext,
  input: { email: string },
): Promise<void> {
  const removed = await Suppression.destroy({ where: { tenantId: ctx.tenantId, email: input.email.toLowerCase() } });
  if (removed === 0) throw new NotFoundError('A suppression for this address');
}

export async function deleteSuppressionById(
  _deps: SuppressionDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<void> {
  const removed = await Suppression.destroy({ where: { tenantId: ctx.tenantId, id: { [Op.eq]: input.id } } });
  if (removed === 0) throw new NotFoundError('The suppression');
}
