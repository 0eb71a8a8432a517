// The adapter between SMTP and the send pipeline, kept in one place: a submitted MIME message and
// its envelope become the same NormalizedSend a `POST /emails/send` body becomes (normalizeSend
// checks both), and the pipeline's refusals (ApiError) become SMTP replies carrying their sentence.
//
// Recipients follow the envelope, as with every SMTP relay: a To/Cc address is sent to when it is
// also a RCPT TO, and every RCPT TO that the To/Cc headers do not name is a Bcc.
import type { AddressObject, EmailAddress, ParsedMail } from 'mailparser';
import { ApiError, ValidationError } from '../errors.ts';
import { unstorablePart } from '../db/storable-text.ts';
import { bodyStartOf, headerValue, simpleBodyOf } from './submission-body.ts';
import { readHeaderBlock, type HeaderBlock } from './submission-headers.ts';
import {
  isAllowedCustomHeader,
  normalizeSend,
  type NormalizedSend,
  type SendInput,
} from '../modules/emails/validate.ts';

export interface Submission {
  send: NormalizedSend;
  /** The client's `Idempotency-Key` header, as the HTTP header would be read. */
  idempotencyKey: string | null;
}

export interface SmtpReply {
  code: number;
  message: string;
}

function mailboxes(field: AddressObject | AddressObject[] | undefined): EmailAddress[] {
  const objects = field === undefined ? [] : Array.isArray(field) ? field : [field];
  // Group syntax ("team: a@x, b@y;") lists its members; an empty group ("undisclosed-recipients:;") none.
  return objects.flatMap((object) => object.value).flatMap((entry) => (entry.group ? entry.group : [entry]));
}

const formatted = (entry: EmailAddress) =>
  entry.name ? `"${entry.name.replace(/(["\\])/g, '\\$1')}" <${entry.address}>` : (entry.address ?? '');

/** What submissionOf reads of a message: its header block (mailparser's reading) and its parts. */
export type SubmittedMail = HeaderBlock & Pick<ParsedMail, 'text' | 'html' | 'attachments'>;

/** The message's own headers the send API would accept too (X-*, List-Id, References …); others are the service's to set. */
function customHeaders(parsed: SubmittedMail): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { key, line } of parsed.headerLines) {
    if (key === 'idempotency-key' || !isAllowedCustomHeader(key)) continue;
    headers[line.slice(0, line.indexOf(':')).trim()] = headerValue(line);
  }
  return headers;
}

/** Maps a parsed message and its envelope to a send; throws the pipeline's ValidationError when it is not one. */
export function submissionOf(
  parsed: SubmittedMail,
  envelope: { mailFrom: string | null; rcptTo: string[] },
): Submission {
  const rcpt = envelope.rcptTo.map((address) => address.toLowerCase());
  const inEnvelope = (entry: EmailAddress) => entry.address !== undefined && rcpt.includes(entry.address.toLowerCase());
  const to = mailboxes(parsed.to);
  const cc = mailboxes(parsed.cc);
  const named = new Set([...to, ...cc].map((entry) => entry.address?.toLowerCase()));
  const from = mailboxes(parsed.from);
  const input: SendInput = {
    // More than one From mailbox is passed as written, for normalizeSend to refuse with its sentence.
    from: from.length === 1 ? formatted(from[0]) : (parsed.from?.text ?? envelope.mailFrom ?? ''),
    to: to.filter(inEnvelope).map(formatted),
    cc: cc.filter(inEnvelope).map(formatted),
    bcc: [...new Set(rcpt.filter((address) => !named.has(address)))],
    replyTo: mailboxes(parsed.replyTo).map(formatted),
    subject: parsed.subject ?? '',
    htmlBody: typeof parsed.html === 'string' ? parsed.html : undefined,
    textBody: parsed.text,
    headers: customHeaders(parsed),
    attachments: parsed.attachments.map((attachment, index) => ({
      filename: attachment.filename ?? `attachment-${index + 1}`,
      content: attachment.content.toString('base64'),
      contentType: attachment.contentType,
    })),
  };
  // A decoded part may hold what PostgreSQL cannot store (quoted-printable `=00`): refused here with
  // its field, as the HTTP API refuses it, rather than failing in the accept's statement as a 451 the
  // client would retry for days.
  const unstorable = unstorablePart(input);
  if (unstorable !== null)
    throw new ValidationError('The send request is not valid.', [
      { field: unstorable.path, message: unstorable.message },
    ]);
  const key = parsed.headers.get('idempotency-key');
  const idempotencyKey = typeof key === 'string' && key.trim() !== '' ? key.trim().slice(0, 255) : null;
  return { send: normalizeSend(input), idempotencyKey };
}

// skipHtmlToText: an HTML-only message stays HTML-only (the pipeline derives no text part either).
const PARSER_OPTIONS = { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true };

// Loaded on first use: mailparser and its charsets cost ≈ 0.3 s of every boot otherwise (docs/boot.md).
// Kept once loaded: an import() per message goes through the module loader each time.
let mailparser: Promise<typeof import('mailparser')> | null = null;

export async function parseSubmission(
  raw: Buffer,
  envelope: { mailFrom: string | null; rcptTo: string[] },
): Promise<Submission> {
  const parser = await (mailparser ??= import('mailparser'));
  // mailparser reads the header block (addresses, encoded words: its reading is kept, without its stream
  // where ./submission-headers.ts can split the block); a body of a simple shape is read straight from
  // the bytes (./submission-body.ts), anything else by mailparser.
  const bodyStart = bodyStartOf(raw);
  if (bodyStart !== -1) {
    const block = raw.subarray(0, bodyStart);
    const head = readHeaderBlock(parser, block) ?? (await parser.simpleParser(block, PARSER_OPTIONS));
    const body = simpleBodyOf(raw, bodyStart, head.headerLines);
    if (body) return submissionOf({ ...head, text: body.text, html: body.html ?? false, attachments: [] }, envelope);
  }
  return submissionOf(await parser.simpleParser(raw, PARSER_OPTIONS), envelope);
}

const MAX_REPLY_CHARS = 450;

/**
 * The SMTP reply for a refusal of the pipeline. Temporary conditions (quota until the next cycle, a
 * concurrent request with the same Idempotency-Key, a failure of ours) are 4xx so the client
 * retries; what the message or the tenant must change first is 5xx.
 */
export function smtpReplyOf(error: unknown): SmtpReply {
  if (!(error instanceof ApiError))
    return { code: 451, message: 'Local error while accepting the message: try again shortly.' };
  const details = error.details?.length ? ` (${error.details.map((d) => `${d.field} ${d.message}`).join('; ')})` : '';
  const message = `${error.message}${details}`.slice(0, MAX_REPLY_CHARS);
  const code = (() => {
    switch (error.code) {
      case 'QUOTA_EXCEEDED':
      case 'RATE_LIMITED':
        return 452;
      case 'IDEMPOTENCY_KEY_IN_USE':
        return 451;
      case 'DOMAIN_NOT_VERIFIED':
        return 553;
      case 'RECIPIENT_SUPPRESSED':
        return 550;
      default:
        return error.statusCode >= 500 ? 451 : 554;
    }
  })();
  return { code, message };
}
