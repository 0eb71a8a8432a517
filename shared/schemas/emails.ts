// Bodies of the send endpoints (CONTRACT.md "Sending"): send, batch, resend, logs.
import { Type, type Static } from '@sinclair/typebox';
import { EMAIL_STATUSES, MAX_BATCH_RECIPIENTS } from '../constants.ts';
import { PageMeta, PageQuery, Timestamp, Uuid, Nullable, OneOf } from './common.ts';

/** An address as RFC 5322 allows it, with an optional display name: `Ana <ana@example.com>`. */
const Address = Type.String({
  minLength: 3,
  maxLength: 998,
  description: 'e-mail address, optionally with a display name',
});
const Addresses = Type.Union([Address, Type.Array(Address, { minItems: 1, maxItems: 50 })]);

export const Attachment = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255 }),
    content: Type.String({ description: 'file content in base64' }),
    contentType: Type.Optional(
      Type.String({ maxLength: 255, description: 'MIME type; guessed from the filename when absent' }),
    ),
  },
  { additionalProperties: false },
);

const SendOptions = {
  cc: Type.Optional(Addresses),
  bcc: Type.Optional(Addresses),
  replyTo: Type.Optional(Addresses),
  textBody: Type.Optional(Type.String({ maxLength: 2_000_000 })),
  data: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description:
        'Liquid variables of the template, or, without one, of subject, htmlBody and textBody: rendered when the send is accepted (broken Liquid: 422 naming the field); without data those are sent as written',
    }),
  ),
  locale: Type.Optional(Type.String({ maxLength: 35 })),
  headers: Type.Optional(
    Type.Record(Type.String(), Type.String({ maxLength: 998 }), {
      description: 'extra headers; X-* and a few list/threading headers only',
    }),
  ),
  tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20 })),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  projectId: Type.Optional(Uuid),
  trackOpens: Type.Optional(Type.Boolean()),
  trackClicks: Type.Optional(Type.Boolean()),
  idempotencyKey: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  attachments: Type.Optional(Type.Array(Attachment, { maxItems: 50 })),
};

export const SendEmailBody = Type.Object(
  {
    from: Address,
    to: Addresses,
    subject: Type.Optional(Type.String({ maxLength: 998 })),
    htmlBody: Type.Optional(Type.String({ maxLength: 2_000_000 })),
    templateVersionId: Type.Optional(Uuid),
    ...SendOptions,
  },
  { additionalProperties: false, description: 'SendEmailDto: at least one of htmlBody, textBody, templateVersionId' },
);
export type SendEmailBody = Static<typeof SendEmailBody>;

export const SendQuery = Type.Object({
  sync: Type.Optional(OneOf(['true', 'false'], { description: 'true delivers before answering' })),
});

export const SendAccepted = Type.Object({
  id: Uuid,
  status: OneOf(['QUEUED', 'SENT', 'FAILED', 'DELIVERED', 'BOUNCED'], {
    description:
      "QUEUED (202); with ?sync=true: SENT (200, a relay took it), DELIVERED (200, the recipient's MX took it: DELIVERY=direct), BOUNCED or FAILED (202, with error), or QUEUED (202) with deferred, waiting or message when no final answer came in time",
  }),
  messageId: Type.String(),
  error: Type.Optional(Type.String()),
  deferred: Type.Optional(
    Type.Object(
      { reason: Type.String(), retryAt: Nullable(Timestamp) },
      { description: "sync, direct delivery: the recipient's server (or DNS) deferred it; reason is its reply" },
    ),
  ),
  waiting: Type.Optional(
    Type.Object(
      { reason: Type.String(), until: Nullable(Timestamp) },
      { description: 'sync, direct delivery: held by a wait of ours (warm-up), not by the recipient' },
    ),
  ),
  message: Type.Optional(Type.String({ description: 'sync: what QUEUED means here, in words' })),
  suppressed: Type.Optional(
    Type.Array(Type.String(), { description: 'recipients left out because they are suppressed' }),
  ),
});
export type SendAccepted = Static<typeof SendAccepted>;

export const BatchBody = Type.Object(
  {
    slug: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    templateVersionId: Type.Optional(Uuid),
    subject: Type.Optional(Type.String({ maxLength: 998 })),
    htmlBody: Type.Optional(Type.String({ maxLength: 2_000_000 })),
    from: Type.Optional(Address),
    recipients: Type.Array(
      Type.Object(
        {
          to: Address,
          data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
          locale: Type.Optional(
            Type.String({
              maxLength: 35,
              description:
                "this recipient's locale (by slug: picks the published version, with send-template's fallback)",
            }),
          ),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_BATCH_RECIPIENTS },
    ),
    ...SendOptions,
  },
  { additionalProperties: false, description: 'SendBatchDto: slug, templateVersionId or subject + htmlBody' },
);
export type BatchBody = Static<typeof BatchBody>;

export const BatchAccepted = Type.Object({
  accepted: Type.Array(Type.Object({ to: Type.String(), id: Uuid, messageId: Type.String() })),
  rejected: Type.Array(Type.Object({ to: Type.String(), reason: Type.String() })),
});
export type BatchAccepted = Static<typeof BatchAccepted>;

export const EmailStatus = OneOf(EMAIL_STATUSES);

export const EmailLogSummary = Type.Object({
  id: Uuid,
  status: EmailStatus,
  messageId: Type.String(),
  from: Type.String(),
  to: Type.Array(Type.String()),
  cc: Type.Array(Type.String()),
  subject: Type.String(),
  tags: Type.Array(Type.String()),
  projectId: Nullable(Uuid),
  templateVersionId: Nullable(Uuid),
  captured: Type.Boolean(),
  testMode: Type.Boolean(),
  attempts: Type.Integer(),
  error: Nullable(Type.String()),
  sentAt: Nullable(Timestamp),
  createdAt: Timestamp,
  waiting: Type.Optional(
    Nullable(Type.Object({ kind: Type.String(), reason: Type.String(), until: Nullable(Timestamp) }), {
      description:
        "direct delivery: held by a wait of ours (kind warmup, or shaping: a throttle, a suspension, a paused tenant), not by the recipient's server — why, and when it goes; null otherwise",
    }),
  ),
});
export type EmailLogSummary = Static<typeof EmailLogSummary>;

export const EmailTimelineEntry = Type.Object({
  type: Type.String(),
  data: Type.Record(Type.String(), Type.Unknown()),
  createdAt: Timestamp,
});

/** An inbound message linked to this send as its reply (issue 52 §3), from the log's `replied` events. */
export const EmailReply = Type.Object({
  inboundId: Uuid,
  from: Nullable(Type.String({ description: "the reply's From address" })),
  subject: Nullable(Type.String()),
  receivedAt: Timestamp,
});
export type EmailReply = Static<typeof EmailReply>;

export const EmailLogDetail = Type.Intersect([
  EmailLogSummary,
  Type.Object({
    bcc: Type.Array(Type.String()),
    replyTo: Type.Array(Type.String()),
    bodyHtml: Nullable(Type.String()),
    bodyText: Nullable(Type.String()),
    headers: Type.Record(Type.String(), Type.String(), {
      description: 'headers of the message as sent (custom and generated)',
    }),
    metadata: Type.Record(Type.String(), Type.Unknown()),
    attachments: Type.Array(Type.Object({ filename: Type.String(), contentType: Type.String(), size: Type.Integer() })),
    trackOpens: Type.Boolean(),
    trackClicks: Type.Boolean(),
    smtpResponse: Nullable(Type.String()),
    resentFrom: Nullable(Uuid),
    bodiesRemovedAt: Nullable(Timestamp, {
      description:
        'when retention removed the bodies, template data and attachment contents (the log stays until its own horizon); such a log cannot be resent',
    }),
    events: Type.Array(EmailTimelineEntry),
    replies: Type.Array(EmailReply, {
      description:
        'inbound messages that answer this send (In-Reply-To or References name its Message-ID), oldest first',
    }),
    raw: Nullable(Type.String(), { description: 'the whole RFC 822 message when it was captured' }),
  }),
]);
export type EmailLogDetail = Static<typeof EmailLogDetail>;

export const LogsQuery = Type.Intersect([
  PageQuery(),
  Type.Object({
    status: Type.Optional(EmailStatus),
    to: Type.Optional(
      Type.String({
        maxLength: 320,
        description: 'a recipient (To) address, case-insensitive; also matches "Name <address>" entries',
      }),
    ),
    messageId: Type.Optional(
      Type.String({ maxLength: 998, description: 'the Message-ID, with or without its angle brackets' }),
    ),
    since: Type.Optional(Type.String({ format: 'date-time' })),
    until: Type.Optional(Type.String({ format: 'date-time' })),
    tag: Type.Optional(Type.String({ maxLength: 100 })),
    cursor: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'meta.nextCursor of the previous page; page is ignored when given. The way to read past the first 10,000 logs',
      }),
    ),
  }),
]);
export type LogsQuery = Static<typeof LogsQuery>;

/** page × limit may not go past this many logs: deeper reading walks with the cursor. */
export const MAX_LOG_OFFSET = 10_000;
/**
 * meta.total is exact up to this many matches, then an estimate (meta.totalIsEstimate). Counting a
 * match can cost a heap page (rows not yet marked all-visible by VACUUM, e.g. a status of 2 % spread
 * over a new partition): 10,000 was 20–100 ms at 1,000,000 logs written through the API, 1,000 is 8.
 */
export const EXACT_LOG_TOTAL = 1_000;

export const LogsPage = Type.Object({
  data: Type.Array(EmailLogSummary),
  meta: Type.Composite([
    PageMeta,
    Type.Object({
      totalIsEstimate: Type.Boolean({
        description: `true when total (and totalPages) are the planner's estimate, not a count: when more than ${EXACT_LOG_TOTAL} logs match, or when counting them would cost more than reading the page (a tag search over a large history); a page that ends the results always has the exact total`,
      }),
      nextCursor: Nullable(Type.String(), {
        description: 'pass as cursor for the page after this one; null on the last page',
      }),
    }),
  ]),
});
export type LogsPage = Static<typeof LogsPage>;
