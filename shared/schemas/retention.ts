// How long history is kept (days). The platform default lives in platform settings
// (GET/PATCH /platform/settings: logRetentionDays …); a tenant may shorten each horizon
// (GET/PATCH /tenants/{tenantId}/retention). Enforced hourly by the maintenance worker.
import { Type, type Static } from '@sinclair/typebox';
import { Nullable } from './common.ts';

export const RetentionDays = Type.Integer({ minimum: 1, maximum: 3650 });

/** The five horizons, keyed as in the tenant body. */
export const RETENTION_KINDS = [
  'logsDays',
  'bodiesDays',
  'rawMessagesDays',
  'eventsDays',
  'webhookDeliveriesDays',
] as const;
export type RetentionKind = (typeof RETENTION_KINDS)[number];

const LOGS = 'email logs with their timeline (email_logs, email_events)';
const BODIES = 'the HTML and text bodies of a log (nulled; the log itself stays for logsDays)';
const RAW = 'raw captured messages (captured_messages)';
const EVENTS = 'the event outbox (events)';
const DELIVERIES = 'webhook deliveries and their responses';

// Null first: with type coercion on, a null tried against the integer branch first becomes 0.
const override = (description: string) =>
  Nullable(RetentionDays, { description: `${description}; days, null = the platform default` });
const change = (description: string) =>
  Type.Optional(
    Nullable(RetentionDays, { description: `${description}; at most the platform default; null clears the override` }),
  );
const days = (description: string) => Type.Integer({ description });

export const UpdateTenantRetentionBody = Type.Object(
  {
    logsDays: change(LOGS),
    bodiesDays: change(BODIES),
    rawMessagesDays: change(RAW),
    eventsDays: change(EVENTS),
    webhookDeliveriesDays: change(DELIVERIES),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateTenantRetentionBody = Static<typeof UpdateTenantRetentionBody>;

const policy = (description?: string) =>
  Type.Object(
    {
      logsDays: days(LOGS),
      bodiesDays: days(BODIES),
      rawMessagesDays: days(RAW),
      eventsDays: days(EVENTS),
      webhookDeliveriesDays: days(DELIVERIES),
    },
    description ? { description } : {},
  );

export const TenantRetentionBody = Type.Object({
  overrides: Type.Object({
    logsDays: override(LOGS),
    bodiesDays: override(BODIES),
    rawMessagesDays: override(RAW),
    eventsDays: override(EVENTS),
    webhookDeliveriesDays: override(DELIVERIES),
  }),
  platformDefault: policy(),
  effective: policy('what the maintenance worker applies: the override when set, else the platform default'),
});
export type TenantRetentionBody = Static<typeof TenantRetentionBody>;
export type RetentionPolicy = TenantRetentionBody['effective'];
