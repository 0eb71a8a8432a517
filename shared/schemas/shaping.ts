// Delivery shaping as platform admins see and set it (docs/mta.md "Shaping and reactions"):
// provider rules (GET/PUT/POST /platform/providers), reaction rules (POST/PATCH/DELETE
// /platform/reaction-rules), reactions and what they did (GET /platform/reactions, DELETE to lift one)
// and per-tenant throttles (GET/PUT /platform/tenants/{id}/throttle).
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

const RulePriority = Type.Integer({ minimum: 0, maximum: 10_000, description: 'lower matches first' });
const ReplyCode = Nullable(Type.Integer({ minimum: 400, maximum: 599 }), { description: 'the reply code to match' });
const EnhancedCode = Nullable(Type.String({ pattern: '^[45]\\.[0-9]{1,3}\\.[0-9]{1,3}$' }), {
  description: 'the RFC 3463 enhanced status code to match, e.g. 4.7.28',
});
const TextPattern = Nullable(Type.String({ minLength: 1, maxLength: 500 }), {
  description:
    'case-insensitive RE2 regular expression over the reply (no backreferences or lookaround: matched in linear time)',
});
const RuleScope = OneOf(['provider', 'destination'] as const);
const RuleMinutes = Nullable(Type.Integer({ minimum: 1, maximum: 10_080 }), {
  description: 'how long a suspension or slow-down lasts; null for pause_tenant',
});
const RuleFactor = Nullable(Type.Number({ minimum: 0.01, maximum: 0.99 }), {
  description: "what a slow-down multiplies the provider's connections and rate by; null unless slow",
});
const RuleDescription = Type.String({ minLength: 1, maxLength: 300 });

export const ReactionRuleBody = Type.Object({
  id: Uuid,
  priority: Type.Integer(),
  providerKey: Nullable(Type.String(), { description: 'null: any provider' }),
  replyCode: Nullable(Type.Integer()),
  enhancedCode: Nullable(Type.String()),
  textPattern: Nullable(Type.String({ description: 'case-insensitive RE2 regular expression over the reply' })),
  patternProblem: Nullable(Type.String(), {
    description: 'why textPattern does not compile (a rule stored before RE2 was the engine): it matches nothing',
  }),
  action: ReactionAction,
  scope: RuleScope,
  minutes: Nullable(Type.Integer()),
  factor: Nullable(Type.Number()),
  description: Type.String(),
  enabled: Type.Boolean(),
});
export type ReactionRuleBody = Static<typeof ReactionRuleBody>;

export const ReactionRuleParams = Type.Object({ ruleId: Uuid });
export const ReactionParams = Type.Object({ reactionId: Uuid });

export const CreateReactionRuleBody = Type.Object(
  {
    priority: Type.Optional(RulePriority),
    providerKey: Type.Optional(Nullable(ProviderKey)),
    replyCode: Type.Optional(ReplyCode),
    enhancedCode: Type.Optional(EnhancedCode),
    textPattern: Type.Optional(TextPattern),
    action: ReactionAction,
    scope: Type.Optional(RuleScope),
    minutes: Type.Optional(RuleMinutes),
    factor: Type.Optional(RuleFactor),
    description: RuleDescription,
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type CreateReactionRuleBody = Static<typeof CreateReactionRuleBody>;

export const UpdateReactionRuleBody = Type.Object(
  {
    priority: Type.Optional(RulePriority),
    providerKey: Type.Optional(Nullable(ProviderKey)),
    replyCode: Type.Optional(ReplyCode),
    enhancedCode: Type.Optional(EnhancedCode),
    textPattern: Type.Optional(TextPattern),
    action: Type.Optional(ReactionAction),
    scope: Type.Optional(RuleScope),
    minutes: Type.Optional(RuleMinutes),
    factor: Type.Optional(RuleFactor),
    description: Type.Optional(RuleDescription),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateReactionRuleBody = Static<typeof UpdateReactionRuleBody>;

export const LiftedReactionBody = Type.Object({
  id: Uuid,
  /** Spool rows given back to the end of the suspension, due again now. */
  rowsDue: Type.Integer(),
});
export type LiftedReactionBody = Static<typeof LiftedReactionBody>;

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

/** The list envelope of every list: `data` is the reactions in force; the rules that set them off beside it. */
export const ReactionsBody = Type.Object({
  data: Type.Array(ActiveReactionBody),
  rules: Type.Array(ReactionRuleBody),
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
