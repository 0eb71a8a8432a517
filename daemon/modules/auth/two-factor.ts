// TOTP two-factor: enable (pending secret) → verify (turns on) → disable (needs a code), and the
// second step of a 2FA login. Secrets are sealed at rest; every accepted code moves
// admins.totp_last_step forward, and a code of that step or an earlier one is refused (no replay).
import type { Sequelize, Transaction } from 'sequelize';
import type { Admin } from './model.ts';
import { modelsOf } from '../models.ts';
import { newTotpSecret, matchTotpStep, otpauthUrl } from './totp.ts';
import { findLiveOneTimeToken } from './tokens.ts';
import {
  completeTwoFactorLogin,
  type AdminCaller,
  type AuthCaller,
  type AuthDeps,
  type RequestOrigin,
} from './service.ts';
import { recordAudit } from '../audit/service.ts';
import { seal, unseal } from '../../crypto/sealed.ts';
import { ApiError, ConflictError, UnauthorizedError } from '../../errors.ts';
import type { TokenPair } from '../../../shared/schemas/auth.ts';

/** Wrong codes a login challenge survives; then the password is needed again. */
export const MAX_CHALLENGE_ATTEMPTS = 5;

const WRONG_CODE = 'The code is wrong, expired or already used: wait for the next code of your authenticator app.';

function wrongCode(): ApiError {
  return new ApiError(400, 'INVALID_TWO_FACTOR_CODE', WRONG_CODE, [{ field: 'body.code', message: 'not accepted' }]);
}

async function lockedAdmin(sequelize: Sequelize, adminId: string, transaction: Transaction): Promise<Admin> {
  const admin = await modelsOf(sequelize).Admin.findByPk(adminId, { transaction, lock: transaction.LOCK.UPDATE });
  if (!admin) throw new UnauthorizedError('This account no longer exists.');
  return admin;
}

/** The time step of a fresh code, or null when the code is wrong or was already used. */
function acceptStep(admin: Admin, sealedSecret: string, code: string, encryptionKey: Buffer): number | null {
  const step = matchTotpStep(code, unseal(encryptionKey, sealedSecret));
  if (step === null) return null;
  const last = admin.totpLastStep === null ? null : Number(admin.totpLastStep);
  return last !== null && step <= last ? null : step;
}

export async function twoFactorStatus(
  deps: AuthDeps,
  caller: AdminCaller,
): Promise<{ enabled: boolean; pending: boolean }> {
  const { adminId } = caller;
  const admin = await modelsOf(deps.db.sequelize).Admin.findByPk(adminId, {
    attributes: ['totpEnabled', 'totpPendingSecret'],
  });
  if (!admin) throw new UnauthorizedError('This account no longer exists.');
  return { enabled: admin.totpEnabled, pending: admin.totpPendingSecret !== null };
}

/** A new pending secret; 2FA stays as it was until a code of this secret is verified. */
export async function startTwoFactor(
  deps: AuthDeps,
  caller: AdminCaller,
): Promise<{ secret: string; otpauthUrl: string }> {
  const { adminId } = caller;
  const admin = await modelsOf(deps.db.sequelize).Admin.findByPk(adminId);
  if (!admin) throw new UnauthorizedError('This account no longer exists.');
  if (admin.totpEnabled) {
    throw new ConflictError(
      'Two-factor authentication is already on: disable it first to enrol a new device.',
      'TWO_FACTOR_ALREADY_ON',
    );
  }
  const secret = newTotpSecret();
  await admin.update({ totpPendingSecret: seal(deps.secrets.encryptionKey, secret) });
  return { secret, otpauthUrl: otpauthUrl(admin.email, secret) };
}

export async function confirmTwoFactor(deps: AuthDeps, origin: AdminCaller, input: { code: string }): Promise<void> {
  const { adminId } = origin;
  const { code } = input;
  await withAdmin(
    deps.db.sequelize,
    adminId,
    async (admin, transaction) => {
      if (admin.totpEnabled)
        throw new ConflictError('Two-factor authentication is already on.', 'TWO_FACTOR_ALREADY_ON');
      if (admin.totpPendingSecret === null) {
        throw new ConflictError(
          'Start with POST /auth/2fa/enable to get a secret, then verify a code of it.',
          'TWO_FACTOR_NOT_STARTED',
        );
      }
      const step = acceptStep(admin, admin.totpPendingSecret, code, deps.secrets.encryptionKey);
      if (step === null) return { fail: true };
      await admin.update(
        { totpSecret: admin.totpPendingSecret, totpPendingSecret: null, totpEnabled: true, totpLastStep: step },
        { transaction },
      );
      await recordAudit(deps.db.sequelize, { action: 'auth.2fa_enabled', adminId, ip: origin.ip }, transaction);
      return { fail: false };
    },
    origin,
  );
}

export async function disableTwoFactor(deps: AuthDeps, origin: AdminCaller, input: { code: string }): Promise<void> {
  const { adminId } = origin;
  const { code } = input;
  await withAdmin(
    deps.db.sequelize,
    adminId,
    async (admin, transaction) => {
      if (!admin.totpEnabled || admin.totpSecret === null) {
        throw new ConflictError('Two-factor authentication is not on.', 'TWO_FACTOR_NOT_ON');
      }
      const step = acceptStep(admin, admin.totpSecret, code, deps.secrets.encryptionKey);
      if (step === null) return { fail: true };
      await admin.update(
        { totpSecret: null, totpPendingSecret: null, totpEnabled: false, totpLastStep: step },
        { transaction },
      );
      await recordAudit(deps.db.sequelize, { action: 'auth.2fa_disabled', adminId, ip: origin.ip }, transaction);
      return { fail: false };
    },
    origin,
  );
}

/**
 * Runs `change` on the locked admin row; a wrong code is recorded in the audit log (outside the
 * rolled-back transaction) and answered 400.
 */
async function withAdmin(
  sequelize: Sequelize,
  adminId: string,
  change: (admin: Admin, transaction: Transaction) => Promise<{ fail: boolean }>,
  origin: RequestOrigin,
): Promise<void> {
  const { fail } = await sequelize.transaction(async (transaction) =>
    change(await lockedAdmin(sequelize, adminId, transaction), transaction),
  );
  if (fail) {
    await recordAudit(sequelize, { action: 'auth.2fa_failed', adminId, ip: origin.ip });
    throw wrongCode();
  }
}

/** Second step of a 2FA login: the challenge is single-use and dies with the first accepted code. */
export async function verifyTwoFactorLogin(
  deps: AuthDeps,
  origin: AuthCaller,
  input: { challengeToken: string; code: string },
): Promise<TokenPair> {
  type Outcome = { tokens: TokenPair } | { error: 'challenge' } | { error: 'code'; adminId: string };
  const outcome = await deps.db.sequelize.transaction(async (transaction): Promise<Outcome> => {
    const challenge = await findLiveOneTimeToken(
      deps.db.sequelize,
      input.challengeToken,
      'login-challenge',
      transaction,
    );
    if (!challenge) return { error: 'challenge' as const };
    const admin = await lockedAdmin(deps.db.sequelize, challenge.adminId, transaction);
    if (!admin.totpEnabled || admin.totpSecret === null) return { error: 'challenge' as const };
    const step = acceptStep(admin, admin.totpSecret, input.code, deps.secrets.encryptionKey);
    if (step === null) {
      const attempts = challenge.attempts + 1;
      await challenge.update(
        { attempts, usedAt: attempts >= MAX_CHALLENGE_ATTEMPTS ? new Date() : null },
        { transaction },
      );
      return { error: 'code' as const, adminId: admin.id };
    }
    await admin.update({ totpLastStep: step }, { transaction });
    await challenge.update({ usedAt: new Date() }, { transaction });
    return { tokens: await completeTwoFactorLogin(deps, admin, origin, transaction) };
  });
  if ('tokens' in outcome) return outcome.tokens;
  if (outcome.error === 'challenge') {
    throw new UnauthorizedError(
      'The sign-in challenge is invalid, used or expired: sign in again with your password.',
      'INVALID_CHALLENGE',
    );
  }
  await recordAudit(deps.db.sequelize, {
    action: 'auth.2fa_failed',
    adminId: outcome.adminId,
    ip: origin.ip,
    metadata: { during: 'login' },
  });
  throw new UnauthorizedError(WRONG_CODE, 'INVALID_TWO_FACTOR_CODE');
}
