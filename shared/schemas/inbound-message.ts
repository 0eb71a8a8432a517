// An inbound message as the reader thread parsed it (daemon/modules/inbound-routing/parse.ts): what an
// application receives in `inbound.received` and what GET /inbound/messages/{id} shows. Every field is
// read from the stranger's message except `auth`, which the service computed itself (verdicts.ts).
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, OneOf } from './common.ts';

export const InboundAddress = Type.Object({
  address: Type.String({ description: 'the mailbox, as written (may be empty for a group or a broken header)' }),
  name: Type.String({ description: 'the display name, decoded; empty when none' }),
});
export type InboundAddress = Static<typeof InboundAddress>;

export const InboundHeader = Type.Object({
  name: Type.String({ description: 'field name as written' }),
  value: Type.String({ description: 'raw value, unfolded (encoded words are left as they are)' }),
});
export type InboundHeader = Static<typeof InboundHeader>;

export const InboundAttachment = Type.Object({
  filename: Nullable(Type.String()),
  contentType: Type.String(),
  size: Type.Integer({ description: 'decoded size in bytes' }),
  contentId: Nullable(Type.String({ description: 'Content-ID without angle brackets' })),
  sha256: Type.String({ description: 'hex SHA-256 of the decoded content' }),
  content: Type.Optional(Type.String({ description: 'base64, when the route inlines attachments this size' })),
  url: Type.Optional(Type.String({ description: 'a signed URL to fetch it for a limited time, when not inline' })),
});
export type InboundAttachment = Static<typeof InboundAttachment>;

/** RFC 8601 result values; `policy` is a DKIM signature refused by local policy (a key too short). */
export const AUTH_RESULTS = [
  'pass',
  'fail',
  'softfail',
  'neutral',
  'none',
  'temperror',
  'permerror',
  'policy',
] as const;
export type AuthResult = (typeof AUTH_RESULTS)[number];
const Result = OneOf(AUTH_RESULTS);

export const SpfVerdict = Type.Object({
  result: Result,
  /** The domain checked: the envelope sender's, or the HELO name's when the sender is null (a bounce). */
  domain: Nullable(Type.String()),
  clientIp: Type.String(),
  explanation: Nullable(Type.String()),
});
export const DkimSignatureVerdict = Type.Object({
  domain: Type.String({ description: 'd=' }),
  selector: Type.String({ description: 's=' }),
  result: Result,
  /** Whether d= aligns with the From domain (relaxed), as DMARC counts it. */
  aligned: Type.Boolean(),
  comment: Nullable(Type.String()),
});
export const DkimVerdict = Type.Object({
  /** pass when any signature passes; otherwise the first signature's result; none when unsigned. */
  result: Result,
  signatures: Type.Array(DkimSignatureVerdict),
});
export const DmarcVerdict = Type.Object({
  result: Result,
  /** The From domain the policy was looked up for. */
  domain: Nullable(Type.String()),
  /** The published policy (none, quarantine, reject), null when none was found. */
  policy: Nullable(Type.String()),
});
export const ArcVerdict = Type.Object({
  result: Result,
  /** The highest ARC instance (i=) in the chain, 0 when there is none. */
  instance: Type.Integer(),
  /** The sealer of the newest instance (its ARC-Seal d=), null when there is none. */
  sealer: Nullable(Type.String()),
});
export const InboundAuth = Type.Object({ spf: SpfVerdict, dkim: DkimVerdict, dmarc: DmarcVerdict, arc: ArcVerdict });
export type InboundAuth = Static<typeof InboundAuth>;

export const InboundParsedMessage = Type.Object({
  /** The first From mailbox; empty address and name when the header is absent. */
  from: InboundAddress,
  to: Type.Array(InboundAddress),
  cc: Type.Array(InboundAddress),
  replyTo: Type.Array(InboundAddress),
  subject: Type.String(),
  date: Nullable(
    Type.String({ format: 'date-time', description: 'the Date header, ISO 8601 UTC; null when absent or unreadable' }),
  ),
  messageId: Nullable(Type.String({ description: 'Message-ID with its angle brackets' })),
  inReplyTo: Nullable(Type.String({ description: 'In-Reply-To (the first id), with its angle brackets' })),
  references: Type.Array(Type.String(), { description: 'References, oldest first, with angle brackets' }),
  text: Type.String({
    description: 'the plain text body (from the HTML when there is no text part), cut at 2 MiB characters',
  }),
  html: Nullable(Type.String({ description: 'the HTML body, cut at 2 MiB characters; the raw source has all' })),
  strippedText: Type.String({ description: 'the text without quoted history and signature' }),
  strippedSignature: Nullable(Type.String({ description: 'the signature cut from the reply, when one was found' })),
  headers: Type.Array(InboundHeader),
  attachments: Type.Array(InboundAttachment, { description: 'the first 500 attachments; the raw source has all' }),
  auth: InboundAuth,
});
export type InboundParsedMessage = Static<typeof InboundParsedMessage>;
