// Password reset and address verification by mail. Both answer the same whether or not the
// address has an account, and take the same time: a request by address builds the mail and runs
// one statement either way; the only difference is whether it inserts the token and the queued
// system mail. The tokens are single-use and stored hashed (reset 1 h, verify 48 h).
// A reset changes the password and ends every session; it leaves two-factor authentication on.
import { QueryTypes } from 'sequelize';
import type { AppDeps } from '../../app-types.ts';
import { modelsOf } from '../models.ts';
import type { Admin } from './model.ts';
import { hashPassword } from './passwords.ts';
import { createOneTimeToken, findLiveOneTimeToken, hashToken, newOpaqueToken, revokeSessions } from './tokens.ts';
import { ONE_TIME_TOKEN_TTL_MS } from './token-lifetimes.ts';
import { normaliseEmail, type AdminCaller, type AuthCaller } from './service.ts';
import { accountLink, composeAccountMail, pickMailLocale } from './mails.ts';
import { recordAudit } from '../audit/service.ts';
import {
  sendSystemMail,
  SYSTEM_MAIL_MAX_ATTEMPTS,
  SYSTEM_QUEUE,
  systemMailPayload,
  type SystemMailDeps,
} from '../../mail/system-mail.ts';
import { wakeQueue } from '../../queue/enqueue.ts';
import { insertJobsSql } from '../../queue/sql/enqueue.ts';
import { ApiError } from '../../errors.ts';

export type RecoveryDeps = Pick<AppDeps, 'db' | 'config' | 'secrets'>;

function systemMailDeps(deps: RecoveryDeps): SystemMailDeps {
  return { sequelize: deps.db.sequelize, config: deps.config, secrets: deps.secrets };
}

function invalidToken(what: string): ApiError {
  return new ApiError(
    400,
    'INVALID_TOKEN',
    `The ${what} link is invalid, already used or expired: ask for a new one.`,
    [{ field: 'body.token', message: 'not accepted' }],
  );
}

async function mailAccountLink(
  deps: RecoveryDeps,
  admin: Admin,
  kind: 'reset-password' | 'verify-email',
  acceptLanguage?: string,
): Promise<void> {
  const token = await createOneTimeToken(deps.db.sequelize, admin.id, kind);
  const locale = pickMailLocale(acceptLanguage);
  const mail = composeAccountMail(kind, locale, accountLink(deps.config.publicUrl, kind, token, locale));
  await sendSystemMail(systemMailDeps(deps), { to: admin.email, ...mail });
}

/**
 * For a request by address: the token and the mail are made whether or not an account matches, and
 * one statement retires earlier tokens, stores the new one and queues the mail only when it does.
 */
async function mailAccountLinkByAddress(
  deps: RecoveryDeps,
  email: string,
  kind: 'reset-password' | 'verify-email',
  acceptLanguage?: string,
): Promise<void> {
  const address = normaliseEmail(email);
  const token = newOpaqueToken();
  const locale = pickMailLocale(acceptLanguage);
  const mail = composeAccountMail(kind, locale, accountLink(deps.config.publicUrl, kind, token, locale));
  const rows = await deps.db.sequelize.query<{ queued: number }>(
    `WITH admin AS (
       SELECT id FROM admins WHERE email = :address AND (:anyAccount OR email_verified_at IS NULL)
     ), retired AS (
       UPDATE auth_tokens SET used_at = now() WHERE admin_id IN (SELECT id FROM admin) AND purpose = :purpose AND used_at IS NULL RETURNING id
     ), token AS (
       INSERT INTO auth_tokens (admin_id, purpose, token_hash, expires_at) SELECT id, :purpose, :tokenHash, :expiresAt FROM admin RETURNING id
     ), job AS (
       ${insertJobsSql('SELECT :queue, NULL::uuid, CAST(:payload AS jsonb), now(), :maxAttempts, NULL::text FROM admin')}
       RETURNING id
     )
     SELECT (SELECT count(*) FROM job)::int AS queued`,
    {
      replacements: {
        address,
        anyAccount: kind === 'reset-password',
        purpose: kind,
        tokenHash: hashToken(token),
        expiresAt: new Date(Date.now() + ONE_TIME_TOKEN_TTL_MS[kind]),
        queue: SYSTEM_QUEUE,
        payload: JSON.stringify(systemMailPayload(deps.secrets, { to: address, ...mail })),
        maxAttempts: SYSTEM_MAIL_MAX_ATTEMPTS,
      },
      type: QueryTypes.SELECT,
    },
  );
  if (rows[0]?.queued) wakeQueue(deps.db.sequelize, SYSTEM_QUEUE);
}

/** Mails a reset link when the address has an account; silent otherwise. */
export async function requestPasswordReset(
  deps: RecoveryDeps,
  caller: AuthCaller,
  input: { email: string },
): Promise<void> {
  await mailAccountLinkByAddress(deps, input.email, 'reset-password', caller.language);
}

export async function resetPassword(
  deps: RecoveryDeps,
  origin: AuthCaller,
  input: { token: string; newPassword: string },
): Promise<void> {
  const { sequelize } = deps.db;
  const passwordHash = await hashPassword(input.newPassword);
  const done = await sequelize.transaction(async (transaction) => {
    const row = await findLiveOneTimeToken(deps.db.sequelize, input.token, 'reset-password', transaction);
    if (!row) return false;
    await row.update({ usedAt: new Date() }, { transaction });
    // Receiving the reset link proves the address too.
    const admin = await modelsOf(deps.db.sequelize).Admin.findByPk(row.adminId, { transaction });
    if (!admin) return false;
    await admin.update({ passwordHash, emailVerifiedAt: admin.emailVerifiedAt ?? new Date() }, { transaction });
    const revoked = await revokeSessions(deps.db.sequelize, admin.id, { transaction });
    await recordAudit(
      deps.db.sequelize,
      { action: 'auth.password_reset', adminId: admin.id, ip: origin.ip, metadata: { revokedSessions: revoked } },
      transaction,
    );
    return true;
  });
  if (!done) throw invalidToken('password reset');
}

/** Mails a verification link when the address has an unverified account; silent otherwise. */
export async function requestEmailVerification(
  deps: RecoveryDeps,
  caller: AuthCaller,
  input: { email: string },
): Promise<void> {
  await mailAccountLinkByAddress(deps, input.email, 'verify-email', caller.language);
}

export async function requestOwnEmailVerification(
  deps: RecoveryDeps,
  caller: AdminCaller,
): Promise<{ alreadyVerified: boolean }> {
  const admin = await modelsOf(deps.db.sequelize).Admin.findByPk(caller.adminId);
  if (!admin) return { alreadyVerified: false };
  if (admin.emailVerifiedAt !== null) return { alreadyVerified: true };
  await mailAccountLink(deps, admin, 'verify-email', caller.language);
  return { alreadyVerified: false };
}

export async function verifyEmail(deps: RecoveryDeps, origin: AuthCaller, input: { token: string }): Promise<void> {
  const done = await deps.db.sequelize.transaction(async (transaction) => {
    const row = await findLiveOneTimeToken(deps.db.sequelize, input.token, 'verify-email', transaction);
    if (!row) return false;
    await row.update({ usedAt: new Date() }, { transaction });
    await modelsOf(deps.db.sequelize).Admin.update(
      { emailVerifiedAt: new Date() },
      { where: { id: row.adminId }, transaction },
    );
    await recordAudit(
      deps.db.sequelize,
      { action: 'auth.email_verified', adminId: row.adminId, ip: origin.ip },
      transaction,
    );
    return true;
  });
  if (!done) throw invalidToken('verification');
}

/** After registration: the welcome verification mail. */
export async function sendVerificationAfterRegistration(
  deps: RecoveryDeps,
  caller: AuthCaller,
  input: { admin: Admin },
): Promise<void> {
  await mailAccountLink(deps, input.admin, 'verify-email', caller.language);
}
