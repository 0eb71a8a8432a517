// Per-destination deliverability (issue 29): what happened to a tenant's mail per mailbox provider
// (mta/providers.ts keys) per UTC day. GET /stats/deliverability, `svc stats deliverability`; across
// every tenant for platform admins, GET /platform/deliverability, `svc platform deliverability`.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.ts';

/** The most days one request may span. */
export const DELIVERABILITY_MAX_DAYS = 366;
export const DELIVERABILITY_DEFAULT_DAYS = 30;

const Day = Type.String({ format: 'date', description: 'a UTC day, YYYY-MM-DD' });
const ProviderKey = Type.String({
  pattern: '^[a-z0-9][a-z0-9_-]{0,39}$',
  description: 'a provider key: google, yahoo, microsoft, apple, default, or one a platform admin defined',
});

export const DeliverabilityQuery = Type.Object(
  {
    from: Type.Optional({
      ...Day,
      description: `first UTC day (default: ${DELIVERABILITY_DEFAULT_DAYS - 1} days before to)`,
    }),
    to: Type.Optional({ ...Day, description: 'last UTC day, included (default: today)' }),
    provider: Type.Optional(ProviderKey),
  },
  { additionalProperties: false },
);
export type DeliverabilityQuery = Static<typeof DeliverabilityQuery>;

const Counts = {
  /** Recipients the destination accepted (2xx), or a relay reported delivered. */
  delivered: Type.Integer({ minimum: 0 }),
  /** Attempts answered with a temporary failure (4xx, time-out), per recipient: one recipient may defer several times. */
  deferred: Type.Integer({ minimum: 0 }),
  /** Recipients that bounced for good (refused, unknown, expired in the spool). */
  bounced: Type.Integer({ minimum: 0 }),
  /** Recipients who reported the mail as spam (feedback loops, provider reports). */
  complained: Type.Integer({ minimum: 0 }),
};

export const DeliverabilityDay = Type.Object({ day: Day, provider: ProviderKey, ...Counts });
export type DeliverabilityDay = Static<typeof DeliverabilityDay>;

export const DeliverabilityTotal = Type.Object({
  provider: ProviderKey,
  ...Counts,
  /** complained / delivered over the period; null with nothing delivered. Gmail and Yahoo ask for under 0.1 %. */
  complaintRate: Nullable(Type.Number({ minimum: 0 })),
  /** bounced / (delivered + bounced) over the period; null with neither. */
  bounceRate: Nullable(Type.Number({ minimum: 0 })),
});
export type DeliverabilityTotal = Static<typeof DeliverabilityTotal>;

export const DeliverabilityBody = Type.Object({
  from: Day,
  to: Day,
  provider: Nullable(ProviderKey),
  /** One row per day and provider that had any outcome, by day then provider. */
  days: Type.Array(DeliverabilityDay),
  /** One row per provider over the whole period, by provider. */
  totals: Type.Array(DeliverabilityTotal),
});
export type DeliverabilityBody = Static<typeof DeliverabilityBody>;

export const PlatformDeliverabilityQuery = Type.Object(
  {
    from: DeliverabilityQuery.properties.from,
    to: DeliverabilityQuery.properties.to,
    provider: DeliverabilityQuery.properties.provider,
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 500, default: 50, description: 'tenants listed, worst first (default 50)' }),
    ),
  },
  { additionalProperties: false },
);
export type PlatformDeliverabilityQuery = Static<typeof PlatformDeliverabilityQuery>;

/** A tenant's sums and rates over the period: a provider's total, with the tenant instead of the provider. */
export const TenantDeliverability = Type.Object({
  tenantId: Type.String({ format: 'uuid' }),
  tenantName: Type.String(),
  ...Type.Omit(DeliverabilityTotal, ['provider']).properties,
});
export type TenantDeliverability = Static<typeof TenantDeliverability>;

export const PlatformDeliverabilityBody = Type.Object({
  from: Day,
  to: Day,
  provider: Nullable(ProviderKey),
  /** Every tenant's outcomes per provider over the period, by provider. */
  totals: Type.Array(DeliverabilityTotal),
  /**
   * Tenants with outcomes in the period, worst first: complaint rate, then bounce rate, then volume (at most
   * `limit`); what a platform admin looks at before a provider does.
   */
  tenants: Type.Array(TenantDeliverability),
  /** Tenants with outcomes in the period, listed or not. */
  tenantCount: Type.Integer({ minimum: 0 }),
});
export type PlatformDeliverabilityBody = Static<typeof PlatformDeliverabilityBody>;
