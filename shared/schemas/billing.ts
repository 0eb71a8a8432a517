// Billing: plans, checkout and portal sessions, the tenant's subscription.
import { Type, type Static } from '@sinclair/typebox';
import { Timestamp, Nullable } from './common.ts';

export const PlanSlugParam = Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,39}$' });

export const BillingPlan = Type.Object({
  planSlug: Type.String(),
  name: Type.String(),
  monthlyEmailLimit: Type.Integer({ description: 'emails a month the plan allows' }),
  aiTokenGrant: Type.Integer({ description: 'AI tokens granted each paid month' }),
  stripePriceId: Nullable(Type.String(), {
    description: 'Stripe price of the plan; null when it cannot be bought (free, or not configured)',
  }),
  active: Type.Boolean(),
});
export type BillingPlan = Static<typeof BillingPlan>;

export const BillingPlanList = Type.Object({ data: Type.Array(BillingPlan) });

export const UpdateBillingPlanBody = Type.Object(
  {
    stripePriceId: Type.Optional(Nullable(Type.String({ pattern: '^price_[A-Za-z0-9_]+$', maxLength: 255 }))),
    aiTokenGrant: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000 })),
    active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1, description: 'platform administrators only' },
);
export type UpdateBillingPlanBody = Static<typeof UpdateBillingPlanBody>;

const HttpUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });

export const CheckoutBody = Type.Object(
  { planSlug: PlanSlugParam, successUrl: HttpUrl, cancelUrl: HttpUrl },
  { additionalProperties: false },
);
export type CheckoutBody = Static<typeof CheckoutBody>;

export const PortalBody = Type.Object(
  { returnUrl: Type.Optional(HttpUrl) },
  { additionalProperties: false, description: 'optional; the return address defaults to the dashboard' },
);
export type PortalBody = Static<typeof PortalBody>;

export const RedirectUrl = Type.Object({ url: Type.String({ description: "send the admin's browser here" }) });

export const SUBSCRIPTION_STATUSES = [
  'none',
  'incomplete',
  'incomplete_expired',
  'trialing',
  'active',
  'past_due',
  'canceled',
  'unpaid',
  'paused',
] as const;

export const Subscription = Type.Object({
  planSlug: Type.String(),
  status: Type.String({
    description: `one of ${SUBSCRIPTION_STATUSES.join(', ')}; none when the tenant never subscribed`,
  }),
  currentPeriodStart: Nullable(Timestamp),
  currentPeriodEnd: Nullable(Timestamp),
  cancelAtPeriodEnd: Type.Boolean(),
  aiTokenBalance: Type.Integer({ description: 'AI tokens granted so far, minus those spent' }),
});
export type Subscription = Static<typeof Subscription>;

export const WebhookReceipt = Type.Object({
  received: Type.Literal(true),
  duplicate: Type.Boolean({ description: 'true when this Stripe event id was processed before' }),
  handled: Type.Boolean({ description: 'false for event types the service ignores' }),
});
