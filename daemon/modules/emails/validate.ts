// Step 2 of the pipeline: a send request becomes a NormalizedSend, or a 400 naming each bad field.
// Header injection is refused outright (CR/LF in any address or header value), custom headers are
// allow-listed, and attachments are decoded to check their real size.
import { MAX_RECIPIENTS_PER_SEND } from '../../../shared/constants.ts';
import { ValidationError, type ErrorDetail } from '../../errors.ts';
import type { NormalizedAttachment } from '../../mail/compose.ts';
import { addressSizeProblem, LINE_BREAK, normalizedBareAddress, parseMailbox } from '../../mail/mailboxes.ts';

export const MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024;
/** Per-route body limit of send and batch: 10 MB of attachments grow by a third in base64. */
export const SEND_BODY_LIMIT_BYTES = 15 * 1024 * 1024;

/** One message to accept. Every path into the pipeline (send, batch, resend, scheduled, templates) builds these. */
export interface NormalizedSend {
  from: string;
  fromAddress: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  htmlBody: string | null;
  textBody: string | null;
  templateVersionId: string | null;
  data: Record<string, unknown> | null;
  locale: string | null;
  headers: Record<string, string>;
  tags: string[];
  metadata: Record<string, unknown>;
  attachments: NormalizedAttachment[];
  projectId: string | null;
  trackOpens: boolean | null;
  trackClicks: boolean | null;
  resentFrom?: string | null;
  scheduledEmailId?: string | null;
}

/** What the send endpoints accept (SendEmailDto without idempotencyKey, which the pipeline reads). */
export interface SendInput {
  from: string;
  to: string | string[];
  cc?: string | string[];
  bcc?: string | string[];
  replyTo?: string | string[];
  subject?: string;
  htmlBody?: string;
  textBody?: string;
  templateVersionId?: string;
  data?: Record<string, unknown>;
  locale?: string;
  headers?: Record<string, string>;
  tags?: string[];
  metadata?: Record<string, unknown>;
  projectId?: string;
  trackOpens?: boolean;
  trackClicks?: boolean;
  attachments?: { filename: string; content: string; contentType?: string }[];
}

const ALLOWED_HEADERS = new Set([
  'list-id',
  'in-reply-to',
  'references',
  'precedence',
  'auto-submitted',
  'keywords',
  'comments',
  'importance',
  'priority',
  'sensitivity',
]);
/** Headers the service sets itself; a request naming one is refused even under the X- prefix. */
const RESERVED_HEADERS = new Set(['x-mailer', 'x-service-email-id']);
const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,75}$/;

/** Whether a request may set this header itself (X-* but the service's own, and ALLOWED_HEADERS). */
export function isAllowedCustomHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return (
    HEADER_NAME.test(name) && !RESERVED_HEADERS.has(lower) && (lower.startsWith('x-') || ALLOWED_HEADERS.has(lower))
  );
}

function list(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function addresses(field: string, values: string[], details: ErrorDetail[]): string[] {
  const out: string[] = [];
  values.forEach((value, index) => {
    const parsed = parseMailbox(value);
    const name = values.length > 1 ? `${field}[${index}]` : field;
    const tooLong = parsed ? addressSizeProblem(parsed.address) : null;
    if (LINE_BREAK.test(value)) details.push({ field: name, message: 'must not contain line breaks' });
    else if (!parsed) details.push({ field: name, message: 'is not a valid e-mail address' });
    else if (tooLong) details.push({ field: name, message: tooLong });
    else out.push(parsed.formatted);
  });
  return out;
}

function decodedSize(base64: string): number | null {
  const clean = base64.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(clean) || clean.length % 4 === 1) return null;
  return Buffer.byteLength(clean, 'base64');
}

/** Checks and normalises one send; throws ValidationError listing every problem. */
export function normalizeSend(input: SendInput, options: { requireSubject?: boolean } = {}): NormalizedSend {
  const details: ErrorDetail[] = [];
  const fromParsed = parseMailbox(input.from);
  if (!fromParsed)
    details.push({
      field: 'from',
      message: LINE_BREAK.test(input.from) ? 'must not contain line breaks' : 'is not a valid e-mail address',
    });
  const to = addresses('to', list(input.to), details);
  const cc = addresses('cc', list(input.cc), details);
  const bcc = addresses('bcc', list(input.bcc), details);
  const replyTo = addresses('replyTo', list(input.replyTo), details);
  if (list(input.to).length === 0) details.push({ field: 'to', message: 'needs at least one recipient' });
  const recipients = list(input.to).length + list(input.cc).length + list(input.bcc).length;
  if (recipients > MAX_RECIPIENTS_PER_SEND) {
    details.push({
      field: 'to',
      message: `at most ${MAX_RECIPIENTS_PER_SEND} recipients across to, cc and bcc (got ${recipients})`,
    });
  }
  const subject = input.subject ?? '';
  if (LINE_BREAK.test(subject)) details.push({ field: 'subject', message: 'must not contain line breaks' });
  if (!input.templateVersionId && (options.requireSubject ?? true) && subject.trim() === '') {
    details.push({ field: 'subject', message: 'is required unless a template gives it' });
  }
  if (!input.htmlBody && !input.textBody && !input.templateVersionId) {
    details.push({ field: 'htmlBody', message: 'one of htmlBody, textBody or templateVersionId is required' });
  }

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (!HEADER_NAME.test(name)) details.push({ field: `headers.${name}`, message: 'is not a valid header name' });
    else if (!isAllowedCustomHeader(name)) {
      details.push({
        field: `headers.${name}`,
        message:
          'may not be set: only X-* headers and List-Id, In-Reply-To, References, Precedence, Auto-Submitted, Keywords, Comments, Importance, Priority, Sensitivity are allowed',
      });
    } else if (LINE_BREAK.test(value))
      details.push({ field: `headers.${name}`, message: 'must not contain line breaks' });
    else headers[name] = value;
  }
  for (const [index, tag] of (input.tags ?? []).entries()) {
    if (LINE_BREAK.test(tag)) details.push({ field: `tags[${index}]`, message: 'must not contain line breaks' });
  }

  const attachments: NormalizedAttachment[] = [];
  let total = 0;
  for (const [index, attachment] of (input.attachments ?? []).entries()) {
    const size = decodedSize(attachment.content);
    if (size === null) details.push({ field: `attachments[${index}].content`, message: 'must be base64' });
    if (/[\r\n"\\/]/.test(attachment.filename))
      details.push({
        field: `attachments[${index}].filename`,
        message: 'must not contain line breaks, quotes or slashes',
      });
    if (attachment.contentType && !/^[\w.+-]+\/[\w.+-]+$/.test(attachment.contentType)) {
      details.push({ field: `attachments[${index}].contentType`, message: 'must be a MIME type like application/pdf' });
    }
    total += size ?? 0;
    attachments.push({
      filename: attachment.filename,
      content: attachment.content.replace(/\s+/g, ''),
      contentType: attachment.contentType ?? null,
      size: size ?? 0,
    });
  }
  if (total > MAX_ATTACHMENT_BYTES)
    details.push({ field: 'attachments', message: `attachments may total at most 10 MB decoded (got ${total} bytes)` });

  if (details.length) throw new ValidationError('The send request is not valid.', details);
  return {
    from: fromParsed!.formatted,
    fromAddress: fromParsed!.address.toLowerCase(),
    to,
    cc,
    bcc,
    replyTo,
    subject,
    htmlBody: input.htmlBody ?? null,
    textBody: input.textBody ?? null,
    templateVersionId: input.templateVersionId ?? null,
    data: input.data ?? null,
    locale: input.locale ?? null,
    headers,
    tags: input.tags ?? [],
    metadata: input.metadata ?? {},
    attachments,
    projectId: input.projectId ?? null,
    trackOpens: input.trackOpens ?? null,
    trackClicks: input.trackClicks ?? null,
  };
}

/** Every recipient of a send, bare and lower-cased. */
export function recipientsOf(send: Pick<NormalizedSend, 'to' | 'cc' | 'bcc'>): string[] {
  return [...send.to, ...send.cc, ...send.bcc].map(normalizedBareAddress);
}
