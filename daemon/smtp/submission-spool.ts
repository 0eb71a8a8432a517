// Spooled at accept (docs/smtp.md): a submitted message that may leave as its client built it
// (emails/service.ts, spoolsAtAccept) is not composed again by a worker. Here it gets what the service
// owns of every message it sends, is signed once with the sender domain's key (as the worker would
// sign it), and goes to the accept statement, which spools it in the same commit as its log.
//
// Of the client's header fields the message keeps the structural ones (From, To, Cc, Reply-To, Subject,
// Date, MIME-Version, Content-*) and those the send API lets a request set (X-*, List-Id, References …:
// isAllowedCustomHeader); every other (Bcc, Message-ID, Sender, Received, DKIM-Signature, X-Mailer,
// Idempotency-Key, Disposition-Notification-To …) is dropped, as the composed message would not carry
// it. Added: our Message-ID (the reply linking of inbound mail finds the send by it), a Date when there
// was none, a From when there was none (the MAIL FROM address the send was accepted with),
// List-Unsubscribe with List-Unsubscribe-Post, X-Service-Email-Id, and the tenant's reply address as Reply-To
// when it turned reply addresses on and the client set none. The body is kept byte for byte.
import type { Config } from '../config.ts';
import type { Secrets } from '../secrets.ts';
import type { SendContextCache } from '../modules/emails/send-context.ts';
import type { AcceptedSend, SpooledAtAccept } from '../modules/emails/insert-accepted.ts';
import { isAllowedCustomHeader } from '../modules/emails/validate.ts';
import { listUnsubscribeHeader, unsubscribeUrl } from '../mail/compose.ts';
import { inboundMailDomain, platformInboundDomain, replyAddress, verpReturnPath } from '../mail/addresses.ts';
import { bareAddress } from '../mail/mailboxes.ts';
import { dkimSignatureField, type HeaderField } from '../mail/sign-built-message.ts';
import { hasBareLf, withCrlfLineEnds } from '../mail/line-ends.ts';
import { headerFieldsOf } from '../mail/header-fields.ts';
import type { RandomBytes } from '../mail/random-pool.ts';
import { bodyStartOf } from './submission-body.ts';
import type { SpooledMessageAnnouncer } from '../mta/spooled-messages.ts';

export interface SubmissionSpoolDeps {
  config: Pick<Config, 'publicUrl' | 'smtpInboundPort' | 'inboundDomain'>;
  secrets: Pick<Secrets, 'linkSigningKey'>;
  /** The sender domain's DKIM key and Return-Path, and the tenant's reply-address setting, as the worker reads them (kept a minute). */
  sendContext: SendContextCache;
  randomBytes?: RandomBytes;
  /**
   * When this process runs the MTA thread too (ROLE=all, DELIVERY=direct): the signed message goes to it
   * in memory as well as to the spool (mta/spooled-messages.ts), so the MTA's claim does not read it back.
   */
  spooledMessages?: Pick<SpooledMessageAnnouncer, 'announce'> | null;
}

/** The client's header fields that go out as they came. */
const STRUCTURAL_HEADERS = new Set([
  'from',
  'to',
  'cc',
  'reply-to',
  'subject',
  'date',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'content-id',
  'content-description',
  'content-language',
]);

/** Whether a header field of the client's (its name as written) goes out. */
export function keepsSubmittedHeader(name: string): boolean {
  const key = name.toLowerCase();
  return STRUCTURAL_HEADERS.has(key) || (key !== 'idempotency-key' && isAllowedCustomHeader(name));
}

/** The client's header fields (mail/header-fields.ts), each with its name, folded with CRLF, without its last line end. */
function submittedFields(block: string): { name: string; field: string }[] {
  return headerFieldsOf(block)
    .map((written) => {
      const field = written.replace(/\r?\n$/, '').replace(/\r?\n/g, '\r\n');
      const colon = field.indexOf(':');
      // A line that is no field (no name before a colon), and the closing blank line, are not carried over.
      return { name: colon > 0 ? field.slice(0, colon).trim() : '', field };
    })
    .filter((f) => f.name !== '');
}

/** An RFC 5322 date of now (`Sun, 29 Nov 2026 09:10:11 +0000`). */
function rfc5322Now(): string {
  return new Date().toUTCString().replace(/GMT$/, '+0000');
}

/** The bytes `raw` after its header block, with CRLF line ends. */
function bodyOf(raw: Buffer, bodyStart: number): Buffer {
  if (bodyStart === -1) return Buffer.alloc(0);
  const body = raw.subarray(bodyStart);
  return hasBareLf(body) ? withCrlfLineEnds(body) : body;
}

/** `send`'s message from the client's `raw` bytes: the service's headers set, signed (see the top of the file). */
export async function spooledSubmission(
  deps: SubmissionSpoolDeps,
  raw: Buffer,
  tenantId: string,
  send: AcceptedSend,
): Promise<SpooledAtAccept> {
  const { request } = send;
  const bodyStart = bodyStartOf(raw);
  const kept = submittedFields(raw.toString('latin1', 0, bodyStart === -1 ? raw.length : bodyStart)).filter((f) =>
    keepsSubmittedHeader(f.name),
  );
  const has = (key: string) => kept.some((f) => f.name.toLowerCase() === key);
  const [signing, replyAddresses] = await Promise.all([
    deps.sendContext.signing(tenantId, request.fromAddress),
    // As a composed send (compose.ts): the tenant's reply address only when the client set no Reply-To.
    has('reply-to') ? false : deps.sendContext.replyAddresses(tenantId),
  ]);
  const reply = replyAddresses
    ? replyAddress(send.id, platformInboundDomain(deps.config), deps.secrets.linkSigningKey)
    : null;
  const url = unsubscribeUrl(
    { id: send.id, tenantId, toAddresses: request.to },
    { publicUrl: deps.config.publicUrl, linkSigningKey: deps.secrets.linkSigningKey, randomBytes: deps.randomBytes },
  );
  const ours: Record<string, string> = {
    ...(has('from') ? {} : { From: request.fromAddress }),
    ...(has('date') ? {} : { Date: rfc5322Now() }),
    'Message-ID': send.messageId,
    ...(reply ? { 'Reply-To': reply } : {}),
    'List-Unsubscribe': listUnsubscribeHeader(
      { url, token: url.slice(url.lastIndexOf('/') + 1) },
      { mailDomain: inboundMailDomain(deps.config) },
    ).replace(', <mailto:', ',\r\n <mailto:'),
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    'X-Service-Email-Id': send.id,
  };
  const fields: HeaderField[] = [
    ...Object.entries(ours).map(([name, value]) => ({ key: name.toLowerCase(), line: `${name}: ${value}` })),
    ...kept.map((f) => ({ key: f.name.toLowerCase(), line: f.field })),
  ];
  const body = bodyOf(raw, bodyStart);
  const signature = signing.dkim ? [await dkimSignatureField(fields, body, signing.dkim)] : [];
  const head = [...signature, ...fields.map((f) => f.line)].join('\r\n');
  const message = Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), body]);
  const recipients = new Set([...request.to, ...request.cc, ...request.bcc].map(bareAddress));
  const handOver = deps.spooledMessages;
  // The log's sent headers, as a composed message's (compose.ts): the request's own, the service's, Message-ID and Subject.
  const sentHeaders = {
    ...request.headers,
    ...(reply ? { 'Reply-To': reply } : {}),
    'List-Unsubscribe': ours['List-Unsubscribe'].replace(',\r\n ', ', '),
    'List-Unsubscribe-Post': ours['List-Unsubscribe-Post'],
    'X-Service-Email-Id': send.id,
    'Message-ID': send.messageId,
    Subject: request.subject,
  };
  return {
    message,
    envelopeFrom: signing.returnPath
      ? verpReturnPath(send.id, signing.returnPath, deps.secrets.linkSigningKey)
      : bareAddress(request.fromAddress),
    recipients: [...recipients],
    sentHeaders: JSON.stringify(sentHeaders),
    handOver: handOver ? (rowIds: string[]) => handOver.announce(rowIds, message) : undefined,
  };
}
