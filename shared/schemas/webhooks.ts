// Outbound webhook endpoints and deliveries, and the bodies of the provider notification receivers.
import { Type, type Static } from '@sinclair/typebox';
import { EMAIL_EVENT_TYPES, type EventType } from '../constants.ts';
import { PageQuery, Paged, Timestamp, Uuid, Nullable, OneOf } from './common.ts';

export const WebhookEventType = Type.Unsafe<EventType>(
  OneOf(EMAIL_EVENT_TYPES, { description: `one of ${EMAIL_EVENT_TYPES.join(', ')}` }),
);

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'https URL receiving events (http and private addresses only when WEBHOOKS_ALLOW_PRIVATE=true)',
    }),
    events: Type.Array(WebhookEventType, { minItems: 1, uniqueItems: true }),
    secret: Type.Optional(
      Type.String({
        minLength: 16,
        maxLength: 256,
        pattern: '^\\S+$',
        description: 'signing secret; generated (whsec_…) when omitted',
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const WebhookEndpoint = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(Type.String()),
  enabled: Type.Boolean(),
  /** Why it is off: `manual` (toggled), `gone` (answered 410), `failing` (too many failures in a row); null when on. */
  disabledReason: Nullable(Type.String()),
  consecutiveFailures: Type.Integer(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

/** The create answer: the only place the secret is ever shown. */
export const CreatedWebhookEndpoint = Type.Intersect([WebhookEndpoint, Type.Object({ secret: Type.String() })]);
export type CreatedWebhookEndpoint = Static<typeof CreatedWebhookEndpoint>;

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed', 'skipped'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WebhookPayload = Type.Object({
  id: Uuid,
  type: Type.String(),
  createdAt: Timestamp,
  tenantId: Uuid,
  data: Type.Record(Type.String(), Type.Unknown()),
});
export type WebhookPayload = Static<typeof WebhookPayload>;

export const WebhookDelivery = Type.Object({
  id: Uuid,
  endpointId: Uuid,
  eventId: Nullable(Uuid),
  event: Type.String(),
  payload: WebhookPayload,
  status: OneOf(WEBHOOK_DELIVERY_STATUSES),
  statusCode: Nullable(Type.Integer()),
  responseBody: Nullable(Type.String()),
  error: Nullable(Type.String()),
  attempt: Type.Integer(),
  deliveredAt: Nullable(Timestamp),
  nextAttemptAt: Nullable(Timestamp),
  replayOf: Nullable(Uuid),
  createdAt: Timestamp,
});
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const WebhookEndpointPage = Paged(WebhookEndpoint);
export const WebhookDeliveryPage = Paged(WebhookDelivery);
export const WebhookEndpointsQuery = PageQuery(100, 20);
export const WebhookDeliveriesQuery = PageQuery(100, 20);

export const DeliveryParams = Type.Object({ id: Uuid, deliveryId: Uuid });

/** `POST /webhooks/smtp-dsn`: a relay's delivery status notification, reduced to what matters. */
export const SmtpDsnBody = Type.Object({
  messageId: Type.String({ minLength: 1, maxLength: 998 }),
  type: Type.Union([Type.Literal('delivered'), Type.Literal('bounced'), Type.Literal('complained')]),
  bounceType: Type.Optional(
    Type.Union([Type.Literal('hard'), Type.Literal('soft')], {
      description: 'hard (permanent) bounces suppress the address',
    }),
  ),
  diagnostic: Type.Optional(Type.String({ maxLength: 2000 })),
});
export type SmtpDsnBody = Static<typeof SmtpDsnBody>;

export const InboundAck = Type.Object({
  ok: Type.Literal(true),
  /** How many email logs the notification updated (0 for unknown message ids). */
  processed: Type.Integer(),
  /** Set for SNS subscription confirmations. */
  subscription: Type.Optional(Type.String()),
});
export type InboundAck = Static<typeof InboundAck>;

/**
 * `POST /webhooks/ses`: what Amazon SNS posts (Content-Type text/plain, JSON inside). With SNS raw
 * message delivery the body is the SES notification itself, which is accepted too.
 */
export const SnsEnvelopeBody = Type.Object(
  {
    Type: Type.Optional(
      Type.String({ description: 'SubscriptionConfirmation, Notification or UnsubscribeConfirmation' }),
    ),
    MessageId: Type.Optional(Type.String()),
    TopicArn: Type.Optional(Type.String()),
    Message: Type.Optional(Type.String({ description: 'the SES notification, as a JSON string' })),
    SubscribeURL: Type.Optional(Type.String()),
    notificationType: Type.Optional(Type.String()),
    eventType: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type SnsEnvelopeBody = Static<typeof SnsEnvelopeBody>;

export const InboundQuery = Type.Object({
  token: Type.Optional(
    Type.String({ maxLength: 512, description: 'INBOUND_WEBHOOK_TOKEN (or send it as the HTTP basic auth password)' }),
  ),
});
