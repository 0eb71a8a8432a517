// Suppression list: checked on every send, filled by hand and automatically (hard bounces,
// complaints, unsubscribes). Addresses are compared lower-cased. The statements, with the send's
// check and the automatic entries, are the table's home's (sql/suppressions.ts).
import { ConflictError, NotFoundError } from '../../errors.ts';
import type { AppDeps } from '../../app-types.ts';
import type { TenantContext } from '../../context.ts';
import type { Suppression, SuppressionReason } from './model.ts';
import { findSuppression, findSuppressionPage, insertSuppression, removeSuppression } from './sql/suppressions.ts';

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

/** What the suppression routes' services take: the connection their models are bound to. */
export type SuppressionDeps = Pick<AppDeps, 'db'>;

export async function listSuppressions(
  deps: SuppressionDeps,
  ctx: TenantContext,
  query: { page?: number; limit?: number; email?: string; reason?: SuppressionReason },
) {
  return findSuppressionPage(deps.db.sequelize, ctx.tenantId, query, view);
}

export async function createSuppression(
  deps: SuppressionDeps,
  ctx: TenantContext,
  body: { email: string; reason: SuppressionReason },
): Promise<SuppressionView> {
  const email = body.email.toLowerCase();
  const existing = await findSuppression(deps.db.sequelize, ctx.tenantId, email);
  if (existing)
    throw new ConflictError(`${email} is already suppressed (reason: ${existing.reason}).`, 'ALREADY_SUPPRESSED');
  try {
    return view(await insertSuppression(deps.db.sequelize, ctx.tenantId, email, body.reason));
  } catch (error) {
    if ((error as { name?: string }).name === 'SequelizeUniqueConstraintError')
      throw new ConflictError(`${email} is already suppressed.`, 'ALREADY_SUPPRESSED');
    throw error;
  }
}

export async function deleteSuppressionByEmail(
  deps: SuppressionDeps,
  ctx: TenantContext,
  input: { email: string },
): Promise<void> {
  const removed = await removeSuppression(deps.db.sequelize, ctx.tenantId, { email: input.email.toLowerCase() });
  if (removed === 0) throw new NotFoundError('A suppression for this address');
}

export async function deleteSuppressionById(
  deps: SuppressionDeps,
  ctx: TenantContext,
  input: { id: string },
): Promise<void> {
  const removed = await removeSuppression(deps.db.sequelize, ctx.tenantId, { id: input.id });
  if (removed === 0) throw new NotFoundError('The suppression');
}
