// Delivery shaping as platform admins see and set it (docs/mta.md "Shaping and reactions"):
// provider rules (GET/PUT/POST /platform/providers), reactions and what they did (GET
// /platform/reactions) and per-tenant throttles (GET/PUT /platform/tenants/{id}/throttle).
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, OneOf, Timestamp, Uuid } from './common.ts';

export const ProviderKey = Type.String({
  pattern: '^[a-z0-9][a-z0-9-]{0,39}$',
  description: "a provider's key: lower-case letters, digits and dashes ('google', 'yahoo', 'default', …)",
});
export const ProviderParams = Type.Object({ key: ProviderKey });

const MxPattern = Type.String({
  pattern: '^(\\*\\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z0-9]{2,63}$',
  maxLength: 253,
  description: 'an MX host name, or *.suffix for any name ending in .suffix; lower case, no trailing dot',
});
const MxPatterns = Type.Array(MxPattern, { maxItems: 50, uniqueItems: true });
const MaxConnections = Type.Integer({ minimum: 1, maximum: 1000, description: 'connections open at once' });
const MaxMessagesPerConnection = Type.Integer({
  minimum: 1,
  maximum: 100_000,
  description: 'messages one connection carries before it is closed',
});
const MessagesPerMinute = Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }), {
  description: 'messages a minute; null: no rate limit beyond the connections',
});

export const ProviderRuleBody = Type.Object({
  key: ProviderKey,
  label: Type.String(),
  mxPatterns: Type.Array(Type.String()),
  maxConnections: Type.Integer(),
  maxMessagesPerConnection: Type.Integer(),
  messagesPerMinute: Nullable(Type.Integer()),
  origin: OneOf(['shipped', 'edited', 'custom'] as const, {
    description: 'shipped: as the release ships it; edited: a shipped rule an admin changed; custom: added by an admin',
  }),
  updatedAt: Nullable(Timestamp),
});
export type ProviderRuleBody = Static<typeof ProviderRuleBody>;

export const ProviderRulesBody = Type.Object({
  data: Type.Array(ProviderRuleBody),
  /** Worker nodes the figures are divided among (each node takes its share). */
  workerNodes: Type.Integer({ description: 'live worker nodes: each node uses its share of every figure' }),
});
export type ProviderRulesBody = Static<typeof ProviderRulesBody>;

export const UpdateProviderBody = Type.Object(
  {
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    mxPatterns: Type.Optional(MxPatterns),
    maxConnections: Type.Optional(MaxConnections),
    maxMessagesPerConnection: Type.Optional(MaxMessagesPerConnection),
    messagesPerMinute: Type.Optional(MessagesPerMinute),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateProviderBody = Static<typeof UpdateProviderBody>;

export const CreateProviderBody = Type.Object(
  {
    key: ProviderKey,
    label: Type.String({ minLength: 1, maxLength: 200 }),
    mxPatterns: Type.Array(MxPattern, { minItems: 1, maxItems: 50, uniqueItems: true }),
    maxConnections: MaxConnections,
    maxMessagesPerConnection: MaxMessagesPerConnection,
    messagesPerMinute: Type.Optional(MessagesPerMinute),
  },
  { additionalProperties: false },
);
export type CreateProviderBody = Static<typeof CreateProviderBody>;

const ReactionAction = OneOf(['suspend', 'slow', 'pause_tenant'] as const);

export const ReactionRuleBody = Type.Object({
  id: Uuid,
  priority: Type.Integer(),
  providerKey: Nullable(Type.String(), { description: 'null: any provider' }),
  replyCode: Nullable(Type.Integer()),
  enhancedCode: Nullable(Type.String()),
  textPattern: Nullable(Type.String({ description: 'case-insensitive regular expression over the reply' })),
  action: ReactionAction,
  scope: OneOf(['provider', 'destination'] as const),
  minutes: Nullable(Type.Integer()),
  factor: Nullable(Type.Number()),
  description: Type.String(),
});

export const ActiveReactionBody = Type.Object({
  id: Uuid,
  providerKey: Type.String(),
  domain: Nullable(Type.String(), { description: 'null: every destination of the provider' }),
  kind: ReactionAction,
  factor: Nullable(Type.Number()),
  until: Nullable(Timestamp, { description: 'null for a tenant pause: until an owner resumes sending' }),
  reason: Type.String({ description: 'the reply that drew the reaction' }),
  rule: Nullable(Type.String()),
  tenantId: Nullable(Uuid),
  createdAt: Timestamp,
});
export type ActiveReactionBody = Static<typeof ActiveReactionBody>;

export const ReactionsBody = Type.Object({
  rules: Type.Array(ReactionRuleBody),
  active: Type.Array(ActiveReactionBody),
});
export type ReactionsBody = Static<typeof ReactionsBody>;

export const TenantThrottleBody = Type.Object({
  tenantId: Uuid,
  messagesPerSecond: Nullable(Type.Number()),
  messagesPerHour: Nullable(Type.Integer()),
});
export type TenantThrottleBody = Static<typeof TenantThrottleBody>;

export const SetTenantThrottleBody = Type.Object(
  {
    messagesPerSecond: Nullable(Type.Number({ minimum: 0.01, maximum: 100_000 }), {
      description: 'messages a second the tenant may deliver at (over all nodes); null: no limit',
    }),
    messagesPerHour: Nullable(Type.Integer({ minimum: 1, maximum: 100_000_000 }), {
      description: 'messages per clock hour (over all nodes, exact); null: no limit',
    }),
  },
  { additionalProperties: false },
);
export type SetTenantThrottleBody = Static<typeof SetTenantThrottleBody>;
