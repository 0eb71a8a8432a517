// Sign-in and sessions: registration, password login (with the 2FA challenge), refresh-token
// rotation with reuse detection, logout, password change, /auth/me.
import type { Sequelize, Transaction } from 'sequelize';
import type { AppDeps } from '../../app-types.ts';
import type { Admin } from './model.ts';
import { modelsOf } from '../models.ts';
import { hashPassword, verifyAgainstDummy, verifyPassword } from './passwords.ts';
import { createOneTimeToken, findRefreshToken, issueRefreshToken, revokeFamily, revokeSessions } from './tokens.ts';
import { recordAudit } from '../audit/service.ts';
import { getPlatformSettings } from '../../db/platform-settings.ts';
import { ConflictError, ForbiddenError, UnauthorizedError } from '../../errors.ts';
import type { AccessTokenClaims } from '../../context.ts';
import { ACCESS_TOKEN_TTL_SECONDS } from './token-lifetimes.ts';
import type {
  AdminSummary,
  LoginAnswer,
  MeAnswer,
  RegistrationStatus,
  TokenPair,
} from '../../../shared/schemas/auth.ts';
import { acceptInvitation, findLiveInvitation, invalidInvitation } from '../tenants/invitations.ts';

/** What the auth services take: the module's deps and the app's access-token signer. */
export type AuthDeps = Pick<AppDeps, 'db' | 'config' | 'secrets'> & {
  signAccessToken(claims: AccessTokenClaims): string;
};

/** Who is asking, for the audit log and the session's label. */
export interface RequestOrigin {
  ip?: string;
  userAgent?: string | null;
}

/** The context of an /auth request: where it comes from, and the language its mails are written in. */
export interface AuthCaller extends RequestOrigin {
  /** The Accept-Language header, for account mails. */
  language?: string;
}

/** The context of a signed-in admin's /auth request. */
export interface AdminCaller extends AuthCaller {
  adminId: string;
  /** The sign-in (refresh-token family) the access token belongs to. */
  sessionId: string | null;
}

export const BAD_CREDENTIALS = 'The e-mail address or the password is wrong.';
const BAD_REFRESH = 'The refresh token is invalid or expired: sign in again.';

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function findAdminByEmail(
  sequelize: Sequelize,
  email: string,
  transaction?: Transaction,
): Promise<Admin | null> {
  return modelsOf(sequelize).Admin.findOne({ where: { email: normaliseEmail(email) }, transaction });
}

export function adminSummary(admin: Admin): AdminSummary {
  return { id: admin.id, email: admin.email, name: admin.name, emailVerified: admin.emailVerifiedAt !== null };
}

export async function registrationStatus(deps: AuthDeps, _caller: AuthCaller): Promise<RegistrationStatus> {
  const [hasAdmins, settings] = await Promise.all([
    modelsOf(deps.db.sequelize)
      .Admin.count()
      .then((n) => n > 0),
    getPlatformSettings(deps.db.sequelize),
  ]);
  return { open: !hasAdmins || settings.registrationOpen, hasAdmins };
}

/** A new admin. The first one becomes platform admin and may register even when registration is closed. */
export async function registerAdmin(
  deps: AuthDeps,
  origin: AuthCaller,
  input: { email: string; password: string; name?: string; invitationToken?: string },
): Promise<Admin> {
  const email = normaliseEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  return deps.db.sequelize.transaction(async (transaction) => {
    // Serialises registrations so two simultaneous "first" admins cannot both become platform admin.
    await deps.db.sequelize.query('LOCK TABLE admins IN SHARE ROW EXCLUSIVE MODE', { transaction });
    // An invitation (for this very address) lets its invitee in even while registration is closed.
    const invitation = input.invitationToken
      ? await findLiveInvitation(deps.db.sequelize, input.invitationToken, email, transaction)
      : null;
    if (input.invitationToken && !invitation) throw invalidInvitation();
    const first = (await modelsOf(deps.db.sequelize).Admin.count({ transaction })) === 0;
    if (!first && !invitation && !(await getPlatformSettings(deps.db.sequelize, transaction)).registrationOpen) {
      throw new ForbiddenError(
        'Registration is closed on this service: ask a platform administrator to add you.',
        'REGISTRATION_CLOSED',
      );
    }
    if (await findAdminByEmail(deps.db.sequelize, email, transaction)) {
      throw new ConflictError(
        'An account with this e-mail address already exists: sign in or reset its password.',
        'EMAIL_TAKEN',
      );
    }
    // The invitation arrived at this address: that proves it.
    const admin = await modelsOf(deps.db.sequelize).Admin.create(
      {
        email,
        passwordHash,
        name: input.name?.trim() || null,
        isPlatformAdmin: first,
        emailVerifiedAt: invitation ? new Date() : null,
      },
      { transaction },
    );
    await recordAudit(
      deps.db.sequelize,
      {
        action: 'auth.registered',
        adminId: admin.id,
        ip: origin.ip,
        metadata: { platformAdmin: first, invited: invitation !== null },
      },
      transaction,
    );
    if (invitation) await acceptInvitation(deps.db.sequelize, invitation, admin.id, transaction, origin.ip);
    return admin;
  });
}

async function startSession(
  deps: AuthDeps,
  admin: Admin,
  origin: RequestOrigin,
  transaction?: Transaction,
): Promise<TokenPair> {
  const refresh = await issueRefreshToken(deps.db.sequelize, admin.id, { userAgent: origin.userAgent, transaction });
  await recordAudit(deps.db.sequelize, { action: 'auth.login', adminId: admin.id, ip: origin.ip }, transaction);
  return sessionTokens(deps, admin, refresh.token, refresh.familyId);
}

function sessionTokens(deps: AuthDeps, admin: Admin, refreshToken: string, familyId: string): TokenPair {
  const claims: AccessTokenClaims = { sub: admin.id, typ: 'access', pa: admin.isPlatformAdmin, sid: familyId };
  return { accessToken: deps.signAccessToken(claims), refreshToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
}

export async function login(
  deps: AuthDeps,
  origin: AuthCaller,
  input: { email: string; password: string },
): Promise<LoginAnswer> {
  const admin = await findAdminByEmail(deps.db.sequelize, input.email);
  const ok = admin
    ? await verifyPassword(input.password, admin.passwordHash)
    : await verifyAgainstDummy(input.password);
  if (!admin || !ok) {
    await recordAudit(deps.db.sequelize, {
      action: 'auth.login_failed',
      adminId: admin?.id ?? null,
      ip: origin.ip,
      metadata: { email: normaliseEmail(input.email) },
    });
    throw new UnauthorizedError(BAD_CREDENTIALS, 'INVALID_CREDENTIALS');
  }
  if (admin.totpEnabled) {
    const challengeToken = await createOneTimeToken(deps.db.sequelize, admin.id, 'login-challenge');
    return { twoFactorRequired: true, challengeToken };
  }
  return startSession(deps, admin, origin);
}

/** Second step of a 2FA login: called by two-factor.ts once the code is accepted. */
export function completeTwoFactorLogin(
  deps: AuthDeps,
  admin: Admin,
  origin: RequestOrigin,
  transaction: Transaction,
): Promise<TokenPair> {
  return startSession(deps, admin, origin, transaction);
}

/**
 * Rotation: the presented token dies and a new one of the same family is born. A token that is
 * already dead being presented again means it was copied: the whole family is revoked.
 */
export async function refreshSession(
  deps: AuthDeps,
  origin: AuthCaller,
  input: { refreshToken: string },
): Promise<TokenPair> {
  const { refreshToken } = input;
  const outcome = await deps.db.sequelize.transaction(async (transaction) => {
    const row = await findRefreshToken(deps.db.sequelize, refreshToken, transaction);
    if (!row) return { error: BAD_REFRESH } as const;
    if (row.revokedAt !== null) {
      const revoked = await revokeFamily(deps.db.sequelize, row.familyId, transaction);
      await recordAudit(
        deps.db.sequelize,
        {
          action: 'auth.refresh_reuse',
          adminId: row.adminId,
          ip: origin.ip,
          metadata: { familyId: row.familyId, revoked },
        },
        transaction,
      );
      return {
        error: 'This refresh token was already used: every session of this sign-in has been revoked. Sign in again.',
      } as const;
    }
    if (row.expiresAt.getTime() <= Date.now()) return { error: BAD_REFRESH } as const;
    const admin = await modelsOf(deps.db.sequelize).Admin.findByPk(row.adminId, { transaction });
    if (!admin) return { error: BAD_REFRESH } as const;
    const next = await issueRefreshToken(deps.db.sequelize, admin.id, {
      familyId: row.familyId,
      userAgent: origin.userAgent,
      transaction,
    });
    await row.update({ revokedAt: new Date(), replacedBy: next.id }, { transaction });
    return { tokens: sessionTokens(deps, admin, next.token, next.familyId) } as const;
  });
  // Thrown after commit, so the family's revocation is not rolled back with the error.
  if ('error' in outcome) throw new UnauthorizedError(outcome.error, 'INVALID_REFRESH_TOKEN');
  return outcome.tokens;
}

/** The session family to act on: the one named by a refresh token the client sent, else the access token's. */
async function sessionFamilyOf(
  sequelize: Sequelize,
  adminId: string,
  sessionId: string | null,
  refreshToken?: string,
): Promise<string | null> {
  if (refreshToken) {
    const row = await findRefreshToken(sequelize, refreshToken);
    if (row && row.adminId === adminId) return row.familyId;
  }
  return sessionId;
}

/** Ends the sign-in the access token belongs to (its refresh-token family). */
export async function logout(deps: AuthDeps, caller: AdminCaller): Promise<number> {
  const { sessionId } = caller;
  return sessionId ? revokeFamily(deps.db.sequelize, sessionId) : 0;
}

export async function logoutAll(deps: AuthDeps, origin: AdminCaller): Promise<number> {
  const { adminId } = origin;
  return deps.db.sequelize.transaction(async (transaction) => {
    const count = await revokeSessions(deps.db.sequelize, adminId, { transaction });
    await recordAudit(
      deps.db.sequelize,
      { action: 'auth.logout_all', adminId, ip: origin.ip, metadata: { revoked: count } },
      transaction,
    );
    return count;
  });
}

/**
 * Keeps the caller's own session (named by `refreshToken`, else by the access token) and revokes
 * every other one. With neither, every session is revoked.
 */
export async function changePassword(
  deps: AuthDeps,
  session: AdminCaller,
  input: { currentPassword: string; newPassword: string; refreshToken?: string },
): Promise<number> {
  const { adminId } = session;
  const admin = await modelsOf(deps.db.sequelize).Admin.findByPk(adminId);
  if (!admin) throw new UnauthorizedError();
  if (!(await verifyPassword(input.currentPassword, admin.passwordHash))) {
    await recordAudit(deps.db.sequelize, {
      action: 'auth.login_failed',
      adminId,
      ip: session.ip,
      metadata: { during: 'change-password' },
    });
    throw new ForbiddenError('The current password is wrong.', 'WRONG_PASSWORD');
  }
  const passwordHash = await hashPassword(input.newPassword);
  const keep = await sessionFamilyOf(deps.db.sequelize, adminId, session.sessionId, input.refreshToken);
  return deps.db.sequelize.transaction(async (transaction) => {
    await admin.update({ passwordHash }, { transaction });
    const revoked = await revokeSessions(deps.db.sequelize, adminId, { keepFamilyId: keep, transaction });
    await recordAudit(
      deps.db.sequelize,
      { action: 'auth.password_changed', adminId, ip: session.ip, metadata: { revokedSessions: revoked } },
      transaction,
    );
    return revoked;
  });
}

export async function describeAdmin(deps: AuthDeps, caller: AdminCaller): Promise<MeAnswer> {
  const { adminId } = caller;
  const { Admin, Membership, Tenant } = modelsOf(deps.db.sequelize);
  const admin = await Admin.findByPk(adminId);
  if (!admin) throw new UnauthorizedError('This account no longer exists.');
  const memberships = await Membership.findAll({ where: { adminId }, order: [['createdAt', 'ASC']] });
  const tenants = memberships.length
    ? await Tenant.findAll({ where: { id: memberships.map((m) => m.tenantId) }, attributes: ['id', 'name', 'status'] })
    : [];
  const byId = new Map(tenants.map((t) => [t.id, t]));
  return {
    ...adminSummary(admin),
    isPlatformAdmin: admin.isPlatformAdmin,
    twoFactorEnabled: admin.totpEnabled,
    createdAt: admin.createdAt.toISOString(),
    tenants: memberships.flatMap((m) => {
      const tenant = byId.get(m.tenantId);
      return tenant ? [{ id: tenant.id, name: tenant.name, role: m.role, status: tenant.status }] : [];
    }),
  };
}
