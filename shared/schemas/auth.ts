// Bodies of the /auth endpoints (CONTRACT.md "Auth bodies"), shared by the daemon and the CLI.
import { Type, type Static } from '@sinclair/typebox';
import { EmailAddress, Timestamp, Uuid, Nullable, PlainName } from './common.ts';

export const PASSWORD_MIN_LENGTH = 10;
/** scrypt reads the whole password; a cap keeps a megabyte "password" from being a cheap DoS. */
export const PASSWORD_MAX_LENGTH = 1024;

const Password = Type.String({
  minLength: PASSWORD_MIN_LENGTH,
  maxLength: PASSWORD_MAX_LENGTH,
  description: `at least ${PASSWORD_MIN_LENGTH} characters`,
});
/** What a sign-in attempt sends: no length rule, so an old short password still gets the usual 401. */
const PresentedPassword = Type.String({ minLength: 1, maxLength: PASSWORD_MAX_LENGTH });
const OpaqueToken = Type.String({ minLength: 16, maxLength: 200 });
export const TotpCode = Type.String({
  pattern: '^[0-9]{6}$',
  description: 'the 6-digit code of the authenticator app',
});

export const RegistrationStatus = Type.Object({ open: Type.Boolean(), hasAdmins: Type.Boolean() });
export type RegistrationStatus = Static<typeof RegistrationStatus>;

export const RegisterBody = Type.Object(
  {
    email: EmailAddress,
    password: Password,
    name: Type.Optional(PlainName(200)),
    invitationToken: Type.Optional(
      Type.String({
        minLength: 10,
        maxLength: 200,
        description: 'from an invitation mail: joins its tenant with its role (works while registration is closed)',
      }),
    ),
  },
  { additionalProperties: false },
);
export type RegisterBody = Static<typeof RegisterBody>;

export const AdminSummary = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Nullable(Type.String()),
  emailVerified: Type.Boolean(),
});
export type AdminSummary = Static<typeof AdminSummary>;

export const RegisterAnswer = Type.Object({ admin: AdminSummary });

export const LoginBody = Type.Object(
  { email: EmailAddress, password: PresentedPassword },
  { additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

export const TokenPair = Type.Object({
  accessToken: Type.String(),
  refreshToken: Type.String(),
  expiresIn: Type.Integer({ description: 'lifetime of the access token in seconds' }),
});
export type TokenPair = Static<typeof TokenPair>;

export const TwoFactorChallenge = Type.Object({
  twoFactorRequired: Type.Literal(true),
  challengeToken: Type.String({ description: 'send it with a code to POST /auth/login/verify-2fa within 5 minutes' }),
});
export type TwoFactorChallenge = Static<typeof TwoFactorChallenge>;

export const LoginAnswer = Type.Union([TokenPair, TwoFactorChallenge]);
export type LoginAnswer = Static<typeof LoginAnswer>;

export const VerifyLoginBody = Type.Object(
  { challengeToken: OpaqueToken, code: TotpCode },
  { additionalProperties: false },
);
export const RefreshBody = Type.Object({ refreshToken: OpaqueToken }, { additionalProperties: false });

export const ChangePasswordBody = Type.Object(
  {
    currentPassword: PresentedPassword,
    newPassword: Password,
    refreshToken: Type.Optional(
      Type.String({ description: 'the session to keep; defaults to the session of the access token' }),
    ),
  },
  { additionalProperties: false },
);
export type ChangePasswordBody = Static<typeof ChangePasswordBody>;

export const EmailBody = Type.Object({ email: EmailAddress }, { additionalProperties: false });
export const ResetPasswordBody = Type.Object(
  { token: OpaqueToken, newPassword: Password },
  { additionalProperties: false },
);
export const VerifyEmailBody = Type.Object({ token: OpaqueToken }, { additionalProperties: false });
export const CodeBody = Type.Object({ code: TotpCode }, { additionalProperties: false });

export const LocaleHeaders = Type.Object({
  'accept-language': Type.String({
    minLength: 1,
    maxLength: 200,
    description: 'language of the mail, e.g. "es" or "en-GB"',
  }),
});

export const TwoFactorSetup = Type.Object({
  secret: Type.String({ description: 'base32 TOTP secret (SHA-1, 6 digits, 30 s)' }),
  otpauthUrl: Type.String(),
});
export const TwoFactorStatus = Type.Object({ enabled: Type.Boolean(), pending: Type.Boolean() });

export const MeAnswer = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Nullable(Type.String()),
  emailVerified: Type.Boolean(),
  isPlatformAdmin: Type.Boolean(),
  twoFactorEnabled: Type.Boolean(),
  createdAt: Timestamp,
  tenants: Type.Array(Type.Object({ id: Uuid, name: Type.String(), role: Type.String(), status: Type.String() })),
});
export type MeAnswer = Static<typeof MeAnswer>;

export const RevokedAnswer = Type.Object({ ok: Type.Literal(true), revokedSessions: Type.Integer() });
