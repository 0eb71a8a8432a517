// Password reset and address verification by mail. Both answer the same whether or not the
// address has an account; the tokens are single-use and stored hashed (reset 1 h, verify 48 h).
// A reset changes the password and ends every session; it leaves two-factor authentication on.
import type { Sequelize } from 'sequelize';
import { Admin } from './model.ts';
import { hashPassword } from './passwords.ts';
import { createOneTimeToken, findLiveOneTimeToken, revokeSessions } from './tokens.ts';
import { findAdminByEmail, type RequestOrigin } from './service.ts';
import { accountLink, composeAccountMail, pickMailLocale } from './mails.ts';
import { recordAudit } from '../audit/service.ts';
import { sendSystemMail, type SystemMailDeps } from '../../mail/system-mail.ts';
import { ApiError } from '../../errors.ts';

export type RecoveryDeps = SystemMailDeps;

function invalidToken(what: string): ApiError {
  return new ApiError(400, 'INVALID_TOKEN', `The ${what} link is invalid, already used or expired: ask for a new one.`, [
    { field: 'body.token', message: 'not accepted' },
  ]);
}

async function mailAccountLink(deps: RecoveryDeps, admin: Admin, kind: 'reset-password' | 'verify-email', acceptLanguage?: string): Promise<void> {
  const token = await createOneTimeToken(admin.id, kind);
  const locale = pickMailLocale(acceptLanguage);
  const mail = composeAccountMail(kind, locale, accountLink(deps.config.publicUrl, kind, token));
  await sendSystemMail(deps, { to: admin.email, ...mail });
}

/** Mails a reset link when the address has an account; silent otherwise. */
export async function requestPasswordReset(deps: RecoveryDeps, email: string, acceptLanguage?: string): Promise<void> {
  const admin = await findAdminByEmail(email);
  if (admin) await mailAccountLink(deps, admin, 'reset-password', acceptLanguage);
}

export async function resetPassword(sequelize: Sequelize, input: { token: string; newPassword: string }, origin: RequestOrigin): Promise<void> {
  const passwordHash = await hashPassword(input.newPassword);
  const done = await sequelize.transaction(async (transaction) => {
    const row = await findLiveOneTimeToken(input.token, 'reset-password', transaction);
    if (!row) return false;
    await row.update({ usedAt: new Date() }, { transaction });
    // Receiving the reset link proves the address too.
    const admin = await Admin.findByPk(row.adminId, { transaction });
    if (!admin) return false;
    await admin.update({ passwordHash, emailVerifiedAt: admin.emailVerifiedAt ?? new Date() }, { transaction });
    const revoked = await revokeSessions(admin.id, { transaction });
    await recordAudit({ action: 'auth.password_reset', adminId: admin.id, ip: origin.ip, metadata: { revokedSessions: revoked } }, transaction);
    return true;
  });
  if (!done) throw invalidToken('password reset');
}

/** Mails a verification link when the address has an unverified account; silent otherwise. */
export async function requestEmailVerification(deps: RecoveryDeps, email: string, acceptLanguage?: string): Promise<void> {
  const admin = await findAdminByEmail(email);
  if (admin && admin.emailVerifiedAt === null) await mailAccountLink(deps, admin, 'verify-email', acceptLanguage);
}

export async function requestOwnEmailVerification(deps: RecoveryDeps, adminId: string, acceptLanguage?: string): Promise<{ alreadyVerified: boolean }> {
  const admin = await Admin.findByPk(adminId);
  if (!admin) return { alreadyVerified: false };
  if (admin.emailVerifiedAt !== null) return { alreadyVerified: true };
  await mailAccountLink(deps, admin, 'verify-email', acceptLanguage);
  return { alreadyVerified: false };
}

export async function verifyEmail(sequelize: Sequelize, token: string, origin: RequestOrigin): Promise<void> {
  const done = await sequelize.transaction(async (transaction) => {
    const row = await findLiveOneTimeToken(token, 'verify-email', transaction);
    if (!row) return false;
    await row.update({ usedAt: new Date() }, { transaction });
    await Admin.update({ emailVerifiedAt: new Date() }, { where: { id: row.adminId }, transaction });
    await recordAudit({ action: 'auth.email_verified', adminId: row.adminId, ip: origin.ip }, transaction);
    return true;
  });
  if (!done) throw invalidToken('verification');
}

/** After registration: the welcome verification mail. */
export async function sendVerificationAfterRegistration(deps: RecoveryDeps, admin: Admin, acceptLanguage?: string): Promise<void> {
  await mailAccountLink(deps, admin, 'verify-email', acceptLanguage);
}
