// Inbound routing (issue 52, docs/inbound.md): the tenant's routes, the messages they received, the
// tenant's inbound address and inbound domains. One schema per shape: the daemon validates with them
// and publishes them in /openapi.json, the CLI types its client with them.
import { Type, type Static } from '@sinclair/typebox';
import { EmailAddress, Nullable, OneOf, PageQuery, Paged, PlainName, Timestamp, Uuid } from './common.ts';
import { InboundParsedMessage } from './inbound-message.ts';

export const INBOUND_ROUTE_ACTIONS = ['webhook', 'forward', 'store', 'refuse'] as const;
export type InboundRouteActionKind = (typeof INBOUND_ROUTE_ACTIONS)[number];

export const INBOUND_MESSAGE_STATUSES = ['received', 'delivered', 'failed', 'stored', 'forwarded'] as const;
export type InboundMessageStatus = (typeof INBOUND_MESSAGE_STATUSES)[number];

/** Attachments up to this size travel base64 in the webhook unless the route says otherwise. */
export const DEFAULT_INLINE_ATTACHMENT_BYTES = 256 * 1024;
/** The most a route may inline: a webhook body stays well under what receivers accept. */
export const MAX_INLINE_ATTACHMENT_BYTES = 10 * 1024 * 1024;
/** Routes a tenant may have: the RCPT TO cache holds them all. */
export const MAX_INBOUND_ROUTES = 500;

/**
 * `support@example.com` (exact), `*@example.com` (any local part) or `reply+*@example.com` (that local
 * part with any `+tag`, passed on as mailboxHash). No regular expressions: each shape is an index look-up.
 * The domain may be written in Unicode (`bücher.example`): the daemon checks it and stores its punycode.
 */
export const INBOUND_MATCH_PATTERN = '^(\\*|[^\\s@*+]+(\\+\\*)?|[^\\s@*]+)@[^\\s@*]+$';
export const InboundMatchAddress = Type.String({
  minLength: 3,
  maxLength: 320,
  pattern: INBOUND_MATCH_PATTERN,
  description: 'the envelope recipient matched: `a@example.com`, `*@example.com` or `local+*@example.com`',
});

const RefuseMessage = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^[\\x20-\\x7E]*$',
  description: 'the text of the 550 a refuse route answers (printable ASCII)',
});
const InlineBytes = Type.Integer({
  minimum: 0,
  maximum: MAX_INLINE_ATTACHMENT_BYTES,
  description: 'attachments up to this size are base64 in the webhook, larger ones a signed URL valid 24 h',
});

export const InboundRoute = Type.Object({
  id: Uuid,
  position: Type.Integer({ description: 'routes are tried in ascending position; the first match decides' }),
  address: InboundMatchAddress,
  action: OneOf(INBOUND_ROUTE_ACTIONS),
  endpointId: Nullable(Uuid, { description: 'the webhook endpoint of a `webhook` route' }),
  forwardTo: Nullable(EmailAddress, { description: 'the address a `forward` route sends to' }),
  refuseMessage: Nullable(RefuseMessage),
  enabled: Type.Boolean(),
  description: Nullable(Type.String({ maxLength: 500 })),
  maxInlineAttachmentBytes: InlineBytes,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type InboundRoute = Static<typeof InboundRoute>;

export const CreateInboundRouteBody = Type.Object(
  {
    address: InboundMatchAddress,
    action: OneOf(INBOUND_ROUTE_ACTIONS),
    endpointId: Type.Optional(Uuid),
    forwardTo: Type.Optional(EmailAddress),
    refuseMessage: Type.Optional(RefuseMessage),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(PlainName(500)),
    position: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'default: after the last' })),
    maxInlineAttachmentBytes: Type.Optional(InlineBytes),
  },
  { additionalProperties: false },
);
export type CreateInboundRouteBody = Static<typeof CreateInboundRouteBody>;

export const UpdateInboundRouteBody = Type.Object(
  {
    address: Type.Optional(InboundMatchAddress),
    action: Type.Optional(OneOf(INBOUND_ROUTE_ACTIONS)),
    endpointId: Type.Optional(Nullable(Uuid)),
    forwardTo: Type.Optional(Nullable(EmailAddress)),
    refuseMessage: Type.Optional(Nullable(RefuseMessage)),
    enabled: Type.Optional(Type.Boolean()),
    description: Type.Optional(Nullable(PlainName(500))),
    position: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
    maxInlineAttachmentBytes: Type.Optional(InlineBytes),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateInboundRouteBody = Static<typeof UpdateInboundRouteBody>;

export const InboundRoutesQuery = PageQuery(MAX_INBOUND_ROUTES, 100);
export const InboundRoutesPage = Paged(InboundRoute);
export type InboundRoutesPage = Static<typeof InboundRoutesPage>;

/** A link to the outbound send an inbound message answers (In-Reply-To / References). */
export const InboundReplyLink = Type.Object({
  emailId: Uuid,
  messageId: Type.String({ description: 'the Message-ID of our send that the reply names' }),
});
export type InboundReplyLink = Static<typeof InboundReplyLink>;

export const InboundMessageSummary = Type.Object({
  id: Uuid,
  routeId: Nullable(Uuid, { description: 'null once the route was removed' }),
  status: OneOf(INBOUND_MESSAGE_STATUSES),
  mailFrom: Nullable(Type.String({ description: 'the envelope sender (MAIL FROM); null for <>' })),
  recipient: Type.String({ description: 'the envelope recipient (RCPT TO) the route took' }),
  mailboxHash: Nullable(Type.String({ description: 'the `+tag` of the recipient, for `local+*@` routes' })),
  clientIp: Nullable(Type.String()),
  from: Nullable(Type.String({ description: 'the From header' })),
  subject: Nullable(Type.String()),
  messageId: Nullable(Type.String()),
  size: Type.Integer({ description: 'bytes of the raw message' }),
  inReplyTo: Nullable(InboundReplyLink),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type InboundMessageSummary = Static<typeof InboundMessageSummary>;

export const InboundMessageDetail = Type.Composite([
  InboundMessageSummary,
  Type.Object({
    /** As the webhook carried it, without attachment contents (the raw source keeps them). */
    parsed: InboundParsedMessage,
    error: Nullable(Type.String({ description: 'why the last delivery or forward failed' })),
  }),
]);
export type InboundMessageDetail = Static<typeof InboundMessageDetail>;

export const InboundMessagesQuery = Type.Object({
  from: Type.Optional(Type.String({ maxLength: 320, description: 'envelope sender or From address contains' })),
  to: Type.Optional(Type.String({ maxLength: 320, description: 'the envelope recipient, exact, case-insensitive' })),
  subject: Type.Optional(Type.String({ maxLength: 200, description: 'subject contains, case-insensitive' })),
  since: Type.Optional(Type.String({ format: 'date-time' })),
  until: Type.Optional(Type.String({ format: 'date-time' })),
  routeId: Type.Optional(Uuid),
  status: Type.Optional(OneOf(INBOUND_MESSAGE_STATUSES)),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String({ maxLength: 200, description: 'meta.nextCursor of the previous page' })),
});
export type InboundMessagesQuery = Static<typeof InboundMessagesQuery>;

export const InboundMessagesPage = Type.Object({
  data: Type.Array(InboundMessageSummary),
  meta: Type.Object({
    limit: Type.Integer(),
    nextCursor: Nullable(Type.String(), { description: 'pass as cursor for the next (older) page; null at the end' }),
  }),
});
export type InboundMessagesPage = Static<typeof InboundMessagesPage>;

export const InboundReplayAnswer = Type.Object({
  id: Uuid,
  status: OneOf(INBOUND_MESSAGE_STATUSES),
  eventId: Nullable(Uuid, { description: 'the new inbound.received event (webhook routes)' }),
});
export type InboundReplayAnswer = Static<typeof InboundReplayAnswer>;

const Count = Type.Integer({ minimum: 0 });

/** Messages by status over a window (`total` is all of them). */
export const InboundStatusCounts = Type.Object({
  total: Count,
  received: Type.Integer({ minimum: 0, description: 'taken, its webhook not yet answered (or being retried)' }),
  delivered: Count,
  failed: Type.Integer({ minimum: 0, description: 'its webhook failed for good, or its endpoint was off' }),
  stored: Count,
  forwarded: Count,
});
export type InboundStatusCounts = Static<typeof InboundStatusCounts>;

/** GET /inbound/stats: what the dashboard shows of inbound mail. */
export const InboundStats = Type.Object({
  last24h: Type.Composite([Type.Object({ since: Timestamp }), InboundStatusCounts]),
  last7d: Type.Composite([Type.Object({ since: Timestamp }), InboundStatusCounts]),
  routes: Type.Array(
    Type.Object({
      routeId: Nullable(Uuid, { description: 'null: routes since removed, and reply addresses no route took' }),
      address: Nullable(InboundMatchAddress),
      action: Nullable(OneOf(INBOUND_ROUTE_ACTIONS)),
      last24h: InboundStatusCounts,
      last7d: InboundStatusCounts,
    }),
    { description: 'routes that took mail in the last 7 days, the busiest first' },
  ),
  failingEndpoints: Type.Array(
    Type.Object({
      endpointId: Uuid,
      url: Type.String(),
      enabled: Type.Boolean({ description: 'false: switched off after its failures' }),
      consecutiveFailures: Count,
      failed: Type.Integer({ minimum: 0, description: 'inbound.received deliveries failed for good in 7 days' }),
      retrying: Type.Integer({ minimum: 0, description: 'inbound.received deliveries failed once, to be tried again' }),
      lastError: Type.String(),
      lastFailedAt: Timestamp,
    }),
    {
      description:
        'endpoints of inbound.received deliveries (last 7 days) whose latest attempt failed, the latest failure first',
    },
  ),
});
export type InboundStats = Static<typeof InboundStats>;

export const InboundTokenAddress = Type.Object({
  address: Type.String({ description: '<token>@<platform inbound domain>; <token>+<tag>@… passes <tag> on' }),
  domain: Type.String(),
  rotatedAt: Nullable(Timestamp),
  replyAddresses: Type.Boolean({
    description:
      'each send without a Reply-To of its own carries reply+<log id>.<tag>@<domain>, and a reply to it is linked to the send and received as this token address',
  }),
});
export type InboundTokenAddress = Static<typeof InboundTokenAddress>;

/** PATCH /inbound/address: the tenant's inbound address settings. */
export const UpdateInboundAddressBody = Type.Object(
  { replyAddresses: Type.Boolean({ description: 'turn reply addresses on or off (off by default)' }) },
  { additionalProperties: false },
);
export type UpdateInboundAddressBody = Static<typeof UpdateInboundAddressBody>;

export const INBOUND_DOMAIN_STATUSES = ['pending', 'verified'] as const;
export const InboundDomain = Type.Object({
  id: Uuid,
  name: Type.String(),
  status: OneOf(INBOUND_DOMAIN_STATUSES),
  expectedMx: Type.String({ description: 'the host the MX record must name' }),
  mxFound: Type.Array(Type.String(), { description: 'MX hosts seen at the last check, most preferred first' }),
  explanation: Nullable(Type.String({ description: 'what is wrong with the MX records, and what to publish' })),
  checkedAt: Nullable(Timestamp),
  verifiedAt: Nullable(Timestamp),
  createdAt: Timestamp,
});
export type InboundDomain = Static<typeof InboundDomain>;

export const CreateInboundDomainBody = Type.Object(
  {
    name: Type.String({
      minLength: 3,
      maxLength: 253,
      description: 'a domain to receive on, e.g. reply.example.com; Unicode names are stored as punycode',
    }),
  },
  { additionalProperties: false },
);
export type CreateInboundDomainBody = Static<typeof CreateInboundDomainBody>;

export const InboundDomainsPage = Paged(InboundDomain);
export type InboundDomainsPage = Static<typeof InboundDomainsPage>;

/** What `inbound.received` adds to the parsed message in its `data`. */
export const InboundEventEnvelope = Type.Object({
  inboundId: Uuid,
  routeId: Uuid,
  mailFrom: Nullable(Type.String()),
  recipient: Type.String(),
  mailboxHash: Nullable(Type.String()),
  inReplyTo: Nullable(InboundReplyLink, { description: 'the send this message answers, when one of ours' }),
  inReplyToHeader: Nullable(Type.String({ description: 'the In-Reply-To header as written' })),
});
export type InboundEventEnvelope = Static<typeof InboundEventEnvelope>;
