// Opaque secrets handed to clients (refresh tokens, reset and verification links, 2FA login
// challenges): 32 random bytes, stored only as their SHA-256 hash. They are high-entropy, so a
// fast hash is enough and a look-up by hash is safe.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Op, type Sequelize, type Transaction } from 'sequelize';
import type { AuthToken, AuthTokenPurpose, RefreshToken } from './model.ts';
import { modelsOf } from '../models.ts';
import { ONE_TIME_TOKEN_TTL_MS, REFRESH_TOKEN_TTL_MS } from './token-lifetimes.ts';

export function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface IssuedRefreshToken {
  token: string;
  id: string;
  familyId: string;
}

export async function issueRefreshToken(
  sequelize: Sequelize,
  adminId: string,
  options: { familyId?: string; userAgent?: string | null; transaction?: Transaction } = {},
): Promise<IssuedRefreshToken> {
  const token = newOpaqueToken();
  const row = await modelsOf(sequelize).RefreshToken.create(
    {
      adminId,
      familyId: options.familyId ?? randomUUID(),
      tokenHash: hashToken(token),
      expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL_MS),
      userAgent: options.userAgent?.slice(0, 300) ?? null,
    },
    { transaction: options.transaction },
  );
  return { token, id: row.id, familyId: row.familyId };
}

/** Revokes every live refresh token of the admin, except those of `keepFamilyId`. Returns how many. */
export async function revokeSessions(
  sequelize: Sequelize,
  adminId: string,
  options: { keepFamilyId?: string | null; transaction?: Transaction } = {},
): Promise<number> {
  const where = {
    adminId,
    revokedAt: { [Op.is]: null },
    ...(options.keepFamilyId ? { familyId: { [Op.ne]: options.keepFamilyId } } : {}),
  };
  const [count] = await modelsOf(sequelize).RefreshToken.update(
    { revokedAt: new Date() },
    { where, transaction: options.transaction },
  );
  return count;
}

export async function revokeFamily(sequelize: Sequelize, familyId: string, transaction?: Transaction): Promise<number> {
  const [count] = await modelsOf(sequelize).RefreshToken.update(
    { revokedAt: new Date() },
    { where: { familyId, revokedAt: { [Op.is]: null } }, transaction },
  );
  return count;
}

export async function findRefreshToken(
  sequelize: Sequelize,
  token: string,
  transaction?: Transaction,
): Promise<RefreshToken | null> {
  return modelsOf(sequelize).RefreshToken.findOne({
    where: { tokenHash: hashToken(token) },
    transaction,
    lock: transaction ? transaction.LOCK.UPDATE : undefined,
  });
}

/** A new single-use token; earlier unused ones of the same purpose for this admin stop working. */
export async function createOneTimeToken(
  sequelize: Sequelize,
  adminId: string,
  purpose: AuthTokenPurpose,
  transaction?: Transaction,
): Promise<string> {
  const token = newOpaqueToken();
  if (purpose !== 'login-challenge') {
    await modelsOf(sequelize).AuthToken.update(
      { usedAt: new Date() },
      { where: { adminId, purpose, usedAt: { [Op.is]: null } }, transaction },
    );
  }
  await modelsOf(sequelize).AuthToken.create(
    { adminId, purpose, tokenHash: hashToken(token), expiresAt: new Date(Date.now() + ONE_TIME_TOKEN_TTL_MS[purpose]) },
    { transaction },
  );
  return token;
}

/** The live token row (locked inside a transaction), or null when unknown, used or expired. */
export async function findLiveOneTimeToken(
  sequelize: Sequelize,
  token: string,
  purpose: AuthTokenPurpose,
  transaction?: Transaction,
): Promise<AuthToken | null> {
  return modelsOf(sequelize).AuthToken.findOne({
    where: { tokenHash: hashToken(token), purpose, usedAt: { [Op.is]: null }, expiresAt: { [Op.gt]: new Date() } },
    transaction,
    lock: transaction ? transaction.LOCK.UPDATE : undefined,
  });
}

/** Whether the sign-in (refresh-token family) still has a live, unexpired token. */
export async function sessionIsLive(sequelize: Sequelize, familyId: string): Promise<boolean> {
  const row = await modelsOf(sequelize).RefreshToken.findOne({
    where: { familyId, revokedAt: { [Op.is]: null }, expiresAt: { [Op.gt]: new Date() } },
    attributes: ['id'],
  });
  return row !== null;
}

/**
 * Maintenance: drops one-time tokens and refresh tokens a day after they expire. An expired
 * refresh token is refused anyway, so its row no longer serves reuse detection.
 */
export async function pruneExpiredAuthTokens(sequelize: Sequelize): Promise<void> {
  await sequelize.query(`DELETE FROM auth_tokens WHERE expires_at < now() - interval '1 day'`);
  await sequelize.query(`DELETE FROM refresh_tokens WHERE expires_at < now() - interval '1 day'`);
}
