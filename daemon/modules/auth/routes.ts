// /auth: registration, sign-in, sessions, password recovery, address verification, 2FA.
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { App, AppDeps } from '../../app-types.ts';
import { access, adminIdOf, authRateLimit, principalOf } from '../../access.ts';
import { ErrorBody, OkBody } from '../../../shared/schemas/common.ts';
import {
  ChangePasswordBody,
  CodeBody,
  EmailBody,
  LocaleHeaders,
  LoginAnswer,
  LoginBody,
  MeAnswer,
  RefreshBody,
  RegisterAnswer,
  RegisterBody,
  RegistrationStatus,
  ResetPasswordBody,
  RevokedAnswer,
  TokenPair,
  TwoFactorSetup,
  TwoFactorStatus,
  VerifyEmailBody,
  VerifyLoginBody,
} from '../../../shared/schemas/auth.ts';
import {
  adminSummary,
  changePassword,
  describeAdmin,
  login,
  logout,
  logoutAll,
  refreshSession,
  registerAdmin,
  registrationStatus,
  type AdminCaller,
  type AuthCaller,
  type AuthDeps,
} from './service.ts';
import {
  confirmTwoFactor,
  disableTwoFactor,
  startTwoFactor,
  twoFactorStatus,
  verifyTwoFactorLogin,
} from './two-factor.ts';
import {
  requestEmailVerification,
  requestOwnEmailVerification,
  requestPasswordReset,
  resetPassword,
  sendVerificationAfterRegistration,
  verifyEmail,
} from './recovery.ts';

/** Who asks and in which language: the pages behind the mails' links take it the same way. */
export function callerOf(request: FastifyRequest): AuthCaller {
  const language = request.headers['accept-language'];
  return {
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
    language: Array.isArray(language) ? language[0] : language,
  };
}

function sessionIdOf(request: FastifyRequest): string | null {
  const principal = principalOf(request);
  return principal.kind === 'admin' ? (principal.sessionId ?? null) : null;
}

function adminCallerOf(request: FastifyRequest): AdminCaller {
  return { ...callerOf(request), adminId: adminIdOf(request), sessionId: sessionIdOf(request) };
}

export default async function authRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['auth'];
  const authDeps: AuthDeps = { ...deps, signAccessToken: (claims) => app.jwt.sign(claims) };
  const authLimit = authRateLimit({
    authMax: deps.config.authRateLimitMax,
    authWindowMs: deps.config.authRateLimitWindowMs,
  });
  const signIn = { access: access.public(), rateLimit: authLimit };
  const session = { access: access.session({ tenant: false }) };
  /** Wrong 2FA codes on these count against the auth limit too. */
  const sessionCode = { ...session, rateLimit: authLimit };
  const denied = { 401: ErrorBody, 403: ErrorBody };
  const limited = { 400: ErrorBody, 429: ErrorBody };

  // A failed mail must not change the answer: that would tell whether the address has an account.
  const mailQuietly = (request: FastifyRequest, work: Promise<unknown>) =>
    work.catch((error: unknown) => request.log.error({ err: error }, 'account mail could not be sent'));

  app.get(
    '/auth/registration-status',
    {
      config: { access: access.public() },
      schema: {
        tags,
        summary: 'Whether registration is open and whether any admin exists',
        response: { 200: RegistrationStatus },
      },
    },
    async (request) => registrationStatus(authDeps, callerOf(request)),
  );

  app.post(
    '/auth/register',
    {
      config: signIn,
      schema: {
        tags,
        summary: 'Create an admin account (the first one becomes platform admin); mails a verification link',
        body: RegisterBody,
        response: { 201: RegisterAnswer, 403: ErrorBody, 409: ErrorBody, ...limited },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const admin = await registerAdmin(authDeps, caller, request.body);
      // An invited admin proved the address by using the invitation: nothing to verify.
      if (admin.emailVerifiedAt === null)
        await mailQuietly(request, sendVerificationAfterRegistration(authDeps, caller, { admin }));
      return reply.code(201).send({ admin: adminSummary(admin) });
    },
  );

  app.post(
    '/auth/login',
    {
      config: signIn,
      schema: {
        tags,
        summary: 'Sign in with e-mail and password: tokens, or a 2FA challenge when 2FA is on',
        body: LoginBody,
        response: { 200: LoginAnswer, 401: ErrorBody, ...limited },
      },
    },
    async (request) => login(authDeps, callerOf(request), request.body),
  );

  app.post(
    '/auth/login/verify-2fa',
    {
      config: signIn,
      schema: {
        tags,
        summary: 'Finish a 2FA sign-in with the challenge token and a TOTP code',
        body: VerifyLoginBody,
        response: { 200: TokenPair, 401: ErrorBody, ...limited },
      },
    },
    async (request) => verifyTwoFactorLogin(authDeps, callerOf(request), request.body),
  );

  app.post(
    '/auth/refresh',
    {
      config: { access: access.public() },
      schema: {
        tags,
        summary: 'Trade a refresh token for a new pair (the old one dies; reusing a dead one revokes the sign-in)',
        body: RefreshBody,
        response: { 200: TokenPair, 400: ErrorBody, 401: ErrorBody },
      },
    },
    async (request) => refreshSession(authDeps, callerOf(request), { refreshToken: request.body.refreshToken }),
  );

  app.post(
    '/auth/logout',
    {
      config: session,
      schema: {
        tags,
        summary: 'End this sign-in: its refresh tokens are revoked (the access token lapses within 15 minutes)',
        response: { 200: RevokedAnswer, ...denied },
      },
    },
    async (request) => {
      const revokedSessions = await logout(authDeps, adminCallerOf(request));
      return { ok: true as const, revokedSessions };
    },
  );

  app.post(
    '/auth/logout-all',
    {
      config: session,
      schema: { tags, summary: 'End every sign-in of this admin', response: { 200: RevokedAnswer, ...denied } },
    },
    async (request) => ({ ok: true as const, revokedSessions: await logoutAll(authDeps, adminCallerOf(request)) }),
  );

  app.post(
    '/auth/change-password',
    {
      config: session,
      schema: {
        tags,
        summary: 'Change the password; every other sign-in is revoked (this one is kept)',
        body: ChangePasswordBody,
        response: { 200: RevokedAnswer, 400: ErrorBody, ...denied },
      },
    },
    async (request) => {
      const revokedSessions = await changePassword(authDeps, adminCallerOf(request), request.body);
      return { ok: true as const, revokedSessions };
    },
  );

  app.get(
    '/auth/me',
    {
      config: session,
      schema: { tags, summary: 'The signed-in admin and their tenants', response: { 200: MeAnswer, ...denied } },
    },
    async (request) => describeAdmin(authDeps, adminCallerOf(request)),
  );

  app.post(
    '/auth/forgot-password',
    {
      config: signIn,
      schema: {
        tags,
        summary: 'Mail a password-reset link (1 hour, single use) in the language of accept-language; always 200',
        headers: LocaleHeaders,
        body: EmailBody,
        response: { 200: OkBody, ...limited },
      },
    },
    async (request) => {
      await mailQuietly(request, requestPasswordReset(authDeps, callerOf(request), { email: request.body.email }));
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/reset-password',
    {
      config: signIn,
      schema: {
        tags,
        summary: 'Set a new password with a reset token; every sign-in is revoked, 2FA stays on',
        body: ResetPasswordBody,
        response: { 200: OkBody, ...limited },
      },
    },
    async (request) => {
      await resetPassword(authDeps, callerOf(request), request.body);
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/verify-email',
    {
      config: { access: access.public() },
      schema: {
        tags,
        summary: 'Confirm the e-mail address with the token of the verification mail',
        body: VerifyEmailBody,
        response: { 200: OkBody, 400: ErrorBody },
      },
    },
    async (request) => {
      await verifyEmail(authDeps, callerOf(request), { token: request.body.token });
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/resend-verification-email',
    {
      config: signIn,
      schema: {
        tags,
        summary: 'Mail a new verification link to an unverified address; always 200',
        body: EmailBody,
        response: { 200: OkBody, ...limited },
      },
    },
    async (request) => {
      await mailQuietly(request, requestEmailVerification(authDeps, callerOf(request), { email: request.body.email }));
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/resend-verification',
    {
      config: session,
      schema: {
        tags,
        summary: "Mail a new verification link to the signed-in admin's address",
        response: { 200: Type.Object({ ok: Type.Literal(true), alreadyVerified: Type.Boolean() }), ...denied },
      },
    },
    async (request) => {
      const result = await requestOwnEmailVerification(authDeps, adminCallerOf(request));
      return { ok: true as const, ...result };
    },
  );

  app.get(
    '/auth/2fa/status',
    {
      config: session,
      schema: {
        tags,
        summary: 'Whether TOTP 2FA is on, or started and waiting for a verified code',
        response: { 200: TwoFactorStatus, ...denied },
      },
    },
    async (request) => twoFactorStatus(authDeps, adminCallerOf(request)),
  );

  app.post(
    '/auth/2fa/enable',
    {
      config: session,
      schema: {
        tags,
        summary: 'Start TOTP enrolment: a new secret and otpauth URL; 2FA turns on after POST /auth/2fa/verify',
        response: { 200: TwoFactorSetup, 409: ErrorBody, ...denied },
      },
    },
    async (request) => startTwoFactor(authDeps, adminCallerOf(request)),
  );

  app.post(
    '/auth/2fa/verify',
    {
      config: sessionCode,
      schema: {
        tags,
        summary: 'Turn 2FA on with a code of the new secret',
        body: CodeBody,
        response: { 200: OkBody, 409: ErrorBody, ...limited, ...denied },
      },
    },
    async (request) => {
      await confirmTwoFactor(authDeps, adminCallerOf(request), { code: request.body.code });
      return { ok: true as const };
    },
  );

  app.post(
    '/auth/2fa/disable',
    {
      config: sessionCode,
      schema: {
        tags,
        summary: 'Turn 2FA off (needs a current code)',
        body: CodeBody,
        response: { 200: OkBody, 409: ErrorBody, ...limited, ...denied },
      },
    },
    async (request) => {
      await disableTwoFactor(authDeps, adminCallerOf(request), { code: request.body.code });
      return { ok: true as const };
    },
  );
}
