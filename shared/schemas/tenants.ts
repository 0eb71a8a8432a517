// Bodies of /tenants, members, API keys and the audit log (CONTRACT.md "Tenants and keys").
import { Type, type Static } from '@sinclair/typebox';
import { EmailAddress, Timestamp, Uuid, Nullable, OneOf, PlainName } from './common.ts';
import { API_KEY_SCOPES } from '../constants.ts';

// Literal unions written out (not mapped from the constants) so that TypeBox's static types stay
// exact for the type provider; the constants module stays the source of the names.
export const MemberRoleSchema = Type.Union(
  [Type.Literal('owner'), Type.Literal('admin'), Type.Literal('developer'), Type.Literal('viewer')],
  {
    description: 'owner > admin > developer > viewer',
  },
);
export const ApiKeyScopeSchema = OneOf(API_KEY_SCOPES, { description: 'one of the API key scopes' });
export const PlanSchema = Type.Union([
  Type.Literal('free'),
  Type.Literal('starter'),
  Type.Literal('pro'),
  Type.Literal('business'),
]);
export const EnvironmentSchema = Type.Union([Type.Literal('live'), Type.Literal('test')], {
  description: 'test keys run the whole pipeline but their mail is captured, never relayed',
});

const Name = PlainName(100);
const NullableTimestamp = Nullable(Timestamp);

export const TenantParams = Type.Object({ tenantId: Uuid });
export const MemberParams = Type.Object({ tenantId: Uuid, targetAdminId: Uuid });
export const ApiKeyParams = Type.Object({ tenantId: Uuid, apiKeyId: Uuid });

export const CreateTenantBody = Type.Object({ name: Name }, { additionalProperties: false });
export type CreateTenantBody = Static<typeof CreateTenantBody>;

export const UpdateTenantBody = Type.Object(
  {
    name: Type.Optional(Name),
    plan: Type.Optional(PlanSchema),
    // Null first: with type coercion on, a null tried against the integer branch first becomes 0.
    monthlyLimit: Type.Optional(
      Nullable(Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), {
        description: 'override of the plan limit; null clears it',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateTenantBody = Static<typeof UpdateTenantBody>;

export const TenantBody = Type.Object({
  id: Uuid,
  name: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('blocked')]),
  plan: Type.String(),
  monthlyLimit: Nullable(Type.Integer()),
  sendingPausedAt: NullableTimestamp,
  sendingPausedReason: Nullable(Type.String({ description: 'why, with the rate, counts and window behind it' })),
  sendingAtRiskAt: Nullable(Timestamp, {
    description: 'since when the complaint or hard-bounce rate has passed the warning level (null: not at risk)',
  }),
  sendingAtRiskReason: Nullable(Type.String({ description: 'the warning, with the numbers behind it' })),
  role: Nullable(MemberRoleSchema, {
    description: "the caller's role in this tenant (null for a platform admin who is not a member)",
  }),
  createdAt: Timestamp,
});
export type TenantBody = Static<typeof TenantBody>;

export const InviteMemberBody = Type.Object(
  { email: EmailAddress, role: MemberRoleSchema },
  { additionalProperties: false },
);
export type InviteMemberBody = Static<typeof InviteMemberBody>;
export const InvitationBody = Type.Object(
  {
    invitationId: Uuid,
    email: Type.String(),
    role: MemberRoleSchema,
    expiresAt: Timestamp,
  },
  { description: 'the address has no account yet: an invitation with a sign-up link was mailed to it' },
);
export type InvitationBody = Static<typeof InvitationBody>;

export const UpdateMemberRoleBody = Type.Object({ role: MemberRoleSchema }, { additionalProperties: false });

export const MemberBody = Type.Object({
  adminId: Uuid,
  email: Type.String(),
  name: Nullable(Type.String()),
  role: MemberRoleSchema,
  createdAt: Timestamp,
});
export type MemberBody = Static<typeof MemberBody>;

export const CreateApiKeyBody = Type.Object(
  {
    name: Name,
    scopes: Type.Array(ApiKeyScopeSchema, { minItems: 1, maxItems: API_KEY_SCOPES.length, uniqueItems: true }),
    environment: Type.Optional(EnvironmentSchema),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

export const ApiKeyBody = Type.Object({
  id: Uuid,
  name: Type.String(),
  prefix: Type.String({ description: 'the non-secret start of the key, to recognise it' }),
  scopes: Type.Array(Type.String()),
  environment: EnvironmentSchema,
  createdBy: Nullable(Uuid),
  lastUsedAt: NullableTimestamp,
  createdAt: Timestamp,
});
export type ApiKeyBody = Static<typeof ApiKeyBody>;

export const CreatedApiKeyBody = Type.Intersect([
  ApiKeyBody,
  Type.Object({ key: Type.String({ description: 'the whole key; shown only in this answer' }) }),
]);
export type CreatedApiKeyBody = Static<typeof CreatedApiKeyBody>;

export const AuditEventBody = Type.Object({
  id: Uuid,
  action: Type.String(),
  adminId: Nullable(Uuid),
  apiKeyId: Nullable(Uuid),
  target: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
});
export type AuditEventBody = Static<typeof AuditEventBody>;
