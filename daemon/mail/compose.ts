// Step 7 of the pipeline: an email log becomes nodemailer message options — rendered bodies,
// tracking, List-Unsubscribe (the one-click https URL, and a mailto when inbound mail is received)
// with List-Unsubscribe-Post (RFC 8058),
// a visible unsubscribe link in the body of campaign mail, custom headers, attachments, the fixed
// Message-ID, the reply address as Reply-To when the tenant asks for one and the send sets none, and
// the DKIM key of the verified domain, which signs both List-Unsubscribe headers.
import type { KeyObject } from 'node:crypto';
import type Mail from 'nodemailer/lib/mailer';
import { compile } from 'html-to-text';
import { signLinkToken } from './link-tokens.ts';
import { applyTracking } from './tracking.ts';
import { markPrintableAsciiBodies } from './encoded-parts.ts';
import type { RandomBytes } from './random-pool.ts';
import { UNSUBSCRIBE_MAILBOX } from './addresses.ts';
import { bareAddress } from './mailboxes.ts';

// Compiled once, at first use: convert() compiles its options at every call (≈ 0.4 ms a message, render/liquid.ts).
let compiledHtmlToText: ((html: string) => string) | null = null;
function htmlToText(html: string): string {
  compiledHtmlToText ??= compile({ wordwrap: 78 });
  return compiledHtmlToText(html);
}

/** The key a message is signed with (modules/domains/signing.ts opens it from the verified domain). */
export interface DkimSigningOptions {
  domainName: string;
  keySelector: string;
  /** Parsed once (keys.ts openDkimSigningKey): never the PEM text, which each signature would parse again. */
  privateKey: KeyObject;
}

/** An attachment as the send request normalised it (emails/validate.ts) and compose attaches it. */
export interface NormalizedAttachment {
  filename: string;
  /** base64 */
  content: string;
  contentType: string | null;
  size: number;
}

/** Headers the DKIM signature covers: nodemailer's defaults plus the RFC 8058 pair. */
export const DKIM_SIGNED_HEADERS =
  'From:Sender:Reply-To:Subject:Date:Message-ID:To:Cc:MIME-Version:Content-Type:Content-Transfer-Encoding:Content-ID:Content-Description:In-Reply-To:References:List-Id:List-Unsubscribe:List-Unsubscribe-Post';

export interface ComposableEmail {
  id: string;
  tenantId: string;
  messageId: string;
  fromAddress: string;
  toAddresses: string[];
  ccAddresses: string[];
  bccAddresses: string[];
  replyTo: string[];
  subject: string;
  htmlBody: string | null;
  textBody: string | null;
  headers: Record<string, string>;
  tags: string[];
  attachments: NormalizedAttachment[];
  trackOpens: boolean;
  trackClicks: boolean;
  /** A campaign's sends carry `campaignId` here: broadcast mail shows its unsubscribe link in the body. */
  metadata?: Record<string, unknown> | null;
}

export interface ComposeOptions {
  publicUrl: string;
  linkSigningKey: Buffer;
  /** The domain of the unsubscribe mailbox when the inbound SMTP listener runs; unset = no mailto is advertised. */
  mailDomain?: string | null;
  dkim: DkimSigningOptions | null;
  /** Envelope sender (Return-Path) when bounces are routed through the customer's domain. */
  envelopeFrom: string | null;
  /**
   * The send's reply address (mail/addresses.ts replyAddress) when its tenant turned reply addresses on:
   * the Reply-To of a send that gives none of its own; a send's own Reply-To is kept as it is.
   */
  replyAddress?: string | null;
  /** The link tokens' IVs: the thread's pool (MailTransports.randomBytes); a call of their own each when absent. */
  randomBytes?: RandomBytes;
}

export function unsubscribeUrl(
  email: Pick<ComposableEmail, 'id' | 'tenantId' | 'toAddresses'>,
  options: Pick<ComposeOptions, 'publicUrl' | 'linkSigningKey' | 'randomBytes'>,
): string {
  const token = signLinkToken(
    options.linkSigningKey,
    { k: 'u', e: email.id, t: email.tenantId, a: bareAddress(email.toAddresses[0]) },
    options.randomBytes,
  );
  return `${options.publicUrl}/u/${token}`;
}

/**
 * The List-Unsubscribe value: the one-click URL (RFC 8058) and, when the service receives mail, the
 * mailto of RFC 2369 — nothing the service cannot act on. The token rides in the subject: 200-odd
 * characters do not fit a local part (64 at most, RFC 5321), and mail clients send the subject as given.
 */
export function listUnsubscribeHeader(
  target: { url: string; token: string },
  options: Pick<ComposeOptions, 'mailDomain'>,
): string {
  if (!options.mailDomain) return `<${target.url}>`;
  return `<${target.url}>, <mailto:${UNSUBSCRIBE_MAILBOX}@${options.mailDomain}?subject=unsubscribe%20${target.token}>`;
}

/** A campaign's sends carry its id in their metadata (campaigns/chunk.ts). */
export function isCampaignSend(email: Pick<ComposableEmail, 'metadata'>): boolean {
  return typeof email.metadata?.campaignId === 'string';
}

/** Broadcast mail (a campaign's sends) shows the unsubscribe link in the body too, as Gmail and Yahoo require. */
export function wantsVisibleUnsubscribe(email: Pick<ComposableEmail, 'metadata'>): boolean {
  return isCampaignSend(email);
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The HTML with an unsubscribe paragraph at the end of its body (before </body> in a whole document). */
export function withUnsubscribeFooterHtml(html: string, url: string): string {
  const footer = `<p style="font-size:12px;color:#666666;margin-top:24px">Don't want these e-mails? <a href="${escapeAttribute(url)}">Unsubscribe</a>.</p>`;
  const close = html.search(/<\/body\s*>/i);
  return close >= 0 ? html.slice(0, close) + footer + html.slice(close) : html + footer;
}

export function withUnsubscribeFooterText(text: string, url: string): string {
  return `${text.replace(/\s+$/, '')}\n\n--\nUnsubscribe: ${url}\n`;
}

export interface ComposedMessage {
  message: Mail.Options;
  /** The headers as they go out (for the log's detail view). */
  headers: Record<string, string>;
  html: string | null;
  text: string | null;
}

export function composeMessage(email: ComposableEmail, options: ComposeOptions): ComposedMessage {
  const unsubscribe = unsubscribeUrl(email, options);
  const unsubscribeToken = unsubscribe.slice(unsubscribe.lastIndexOf('/') + 1);
  const listUnsubscribe = listUnsubscribeHeader({ url: unsubscribe, token: unsubscribeToken }, options);
  const visibleUnsubscribe = wantsVisibleUnsubscribe(email);
  const htmlBody =
    email.htmlBody && visibleUnsubscribe ? withUnsubscribeFooterHtml(email.htmlBody, unsubscribe) : email.htmlBody;
  const html = htmlBody
    ? applyTracking(htmlBody, {
        emailId: email.id,
        publicUrl: options.publicUrl,
        linkSigningKey: options.linkSigningKey,
        trackOpens: email.trackOpens,
        trackClicks: email.trackClicks,
        skipUrls: [unsubscribe],
        randomBytes: options.randomBytes,
      })
    : null;
  // A text part goes with every HTML message: spam filters weigh HTML-only mail against it.
  const plain = email.textBody ?? (email.htmlBody ? htmlToText(email.htmlBody) : null);
  const text = plain !== null && visibleUnsubscribe ? withUnsubscribeFooterText(plain, unsubscribe) : plain;
  const headers: Record<string, string> = {
    ...email.headers,
    'List-Unsubscribe': listUnsubscribe,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    'X-Service-Email-Id': email.id,
  };
  if (email.tags.length) headers['X-Service-Tags'] = email.tags.join(', ');
  const replyTo = email.replyTo.length ? email.replyTo : options.replyAddress ? [options.replyAddress] : [];
  const message: Mail.Options = {
    from: email.fromAddress,
    to: email.toAddresses,
    cc: email.ccAddresses.length ? email.ccAddresses : undefined,
    bcc: email.bccAddresses.length ? email.bccAddresses : undefined,
    replyTo: replyTo.length ? replyTo : undefined,
    subject: email.subject,
    html: html ?? undefined,
    text: text ?? undefined,
    messageId: email.messageId,
    headers,
    attachments: email.attachments.map((a) => ({
      filename: a.filename,
      content: a.content,
      encoding: 'base64',
      ...(a.contentType ? { contentType: a.contentType } : {}),
    })),
    dkim: options.dkim ? { ...options.dkim, headerFieldNames: DKIM_SIGNED_HEADERS } : undefined,
  };
  if (choosesQuotedPrintable(message)) {
    message.textEncoding = 'quoted-printable';
    markPrintableAsciiBodies(message);
  }
  if (options.envelopeFrom) {
    message.envelope = {
      from: options.envelopeFrom,
      to: [...email.toAddresses, ...email.ccAddresses, ...email.bccAddresses].map(bareAddress),
    };
  }
  // The reply address is the service's, not the request's: the log's detail shows it among what went out.
  const added: Record<string, string> =
    email.replyTo.length === 0 && options.replyAddress ? { 'Reply-To': options.replyAddress } : {};
  return {
    message,
    headers: { ...headers, ...added, 'Message-ID': email.messageId, Subject: email.subject },
    html,
    text,
  };
}

/** Printable ASCII, tab, CR and LF only: what nodemailer counts as neither binary nor 8-bit. */
const PRINTABLE_ASCII = /^[\t\n\r\x20-\x7e]*$/;
const LATIN_LETTER = /[A-Za-z]/;
const HEADER_TEXT = /^[\x20-\x7e]*$/;

/** A header value (a string, addresses, a header map) of printable ASCII only: nothing for an encoded word. */
function headerNeedsNoEncoding(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return HEADER_TEXT.test(value);
  if (typeof value !== 'object') return false;
  return Object.values(value).every(headerNeedsNoEncoding);
}

/**
 * Whether nodemailer would choose quoted-printable for every text it encodes in this message, told in
 * two native regular-expression scans instead of its per-character count (mime-node's
 * _getTextEncoding: Q when latin letters outnumber binary and 8-bit characters), which it runs over
 * each 100 KB body and which was 8 % of the send worker's time in bench:mta's profile. Said only
 * where the answer is certain: bodies of printable ASCII with a letter, and headers with nothing to
 * encode; otherwise nodemailer decides as before. The message built is the same either way.
 */
export function choosesQuotedPrintable(message: Mail.Options): boolean {
  const bodies = [message.html, message.text].filter((body): body is string => typeof body === 'string');
  const headers = [
    message.subject,
    message.from,
    message.to,
    message.cc,
    message.bcc,
    message.replyTo,
    message.headers,
    ...(message.attachments ?? []).map((attachment) => attachment.filename),
  ];
  return (
    bodies.length > 0 &&
    bodies.every((body) => PRINTABLE_ASCII.test(body) && LATIN_LETTER.test(body)) &&
    headers.every(headerNeedsNoEncoding)
  );
}
