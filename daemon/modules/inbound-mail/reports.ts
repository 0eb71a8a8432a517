// Delivery reports read into the provider receivers' ProviderReport: a DSN (RFC 3464), a plain
// non-delivery report as MTAs without DSN support write them, and an ARF complaint (RFC 5965).
import { emailIdNamedByReturnPath } from '../../mail/addresses.ts';
import type { ProviderReport } from '../inbound/service.ts';
import { first, parseFieldBlocks, parseFields, type Fields, type ReportMessage } from './mime.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `rfc822; jane@example.com` → `jane@example.com` (address-type prefix and brackets dropped). */
function typedAddress(value: string | null): string | null {
  if (!value) return null;
  const address = value
    .replace(/^[^;]*;\s*/, '')
    .replace(/^<(.*)>$/, '$1')
    .trim();
  return address.includes('@') ? address.toLowerCase() : null;
}

/** The Message-ID and our X-Service-Email-Id from the returned message or its headers, when included. */
function originalIdentity(report: ReportMessage): { messageIds: string[]; emailId?: string } {
  const original = report.parts.find(
    (part) => part.contentType === 'message/rfc822' || part.contentType === 'text/rfc822-headers',
  );
  if (!original) return { messageIds: [] };
  const head = original.body.split(/\r?\n\r?\n/)[0];
  const fields = parseFields(head);
  const emailId = first(fields, 'x-service-email-id');
  const messageId = first(fields, 'message-id');
  return {
    messageIds: messageId ? [messageId] : [],
    ...(emailId && UUID.test(emailId) ? { emailId: emailId.toLowerCase() } : {}),
  };
}

/**
 * A DSN as one ProviderReport per bounce kind: failed recipients with a 5.x.x status are hard, 4.x.x
 * (and `Action: delayed`) soft. Delivered, relayed and expanded recipients report no problem.
 */
export function readDsn(report: ReportMessage): ProviderReport[] {
  const status = report.parts.find(
    (part) => part.contentType === 'message/delivery-status' || part.contentType === 'message/global-delivery-status',
  );
  if (!status) return [];
  const identity = originalIdentity(report);
  const byKind = new Map<'hard' | 'soft', { recipients: string[]; diagnostic: string | null }>();
  // The first block is per-message (Reporting-MTA); each further block is one recipient.
  for (const block of parseFieldBlocks(status.body).slice(1)) {
    const action = first(block, 'action')?.toLowerCase() ?? '';
    if (action !== 'failed' && action !== 'delayed') continue;
    const code = first(block, 'status') ?? '';
    const kind = action === 'failed' && code.startsWith('5') ? 'hard' : 'soft';
    const recipient = typedAddress(first(block, 'final-recipient')) ?? typedAddress(first(block, 'original-recipient'));
    const entry = byKind.get(kind) ?? { recipients: [], diagnostic: null };
    if (recipient) entry.recipients.push(recipient);
    entry.diagnostic ??=
      [code, first(block, 'diagnostic-code')?.replace(/^[^;]*;\s*/, '')].filter(Boolean).join(' ') || null;
    byKind.set(kind, entry);
  }
  // Soft first: when both come in one DSN the hard outcome is the one the log keeps.
  return (['soft', 'hard'] as const).flatMap((kind) => {
    const entry = byKind.get(kind);
    return entry
      ? [
          {
            ...identity,
            type: 'bounced' as const,
            bounceType: kind,
            recipients: entry.recipients,
            diagnostic: entry.diagnostic,
          },
        ]
      : [];
  });
}

const NDR_SENDER = /^(mailer-daemon|postmaster|mail-daemon|mail delivery)/i;
const NDR_SUBJECT =
  /(undeliver|undelivered|delivery (status notification|failure|has failed)|returned mail|failure notice|mail delivery failed|delivery incomplete)/i;

/**
 * A plain non-delivery report (no multipart/report): recognised by its sender or subject, so an
 * out-of-office reply to the return path is not taken for a bounce. An enhanced status code or an
 * SMTP reply code in the text decides hard or soft; without either, the message was not delivered: hard.
 * `knownRecipients` are the send's recipients: those the text names are the ones that bounced.
 */
export function readPlainNdr(
  headers: Fields,
  text: string,
  knownRecipients: string[],
  nullSender: boolean,
): ProviderReport | null {
  const from = (first(headers, 'from') ?? '').replace(/^.*<([^>]+)>.*$/, '$1');
  const subject = first(headers, 'subject') ?? '';
  if (!nullSender && !NDR_SENDER.test(from) && !NDR_SUBJECT.test(subject)) return null;
  if (!NDR_SUBJECT.test(subject) && !/\b[45]\.\d{1,3}\.\d{1,3}\b/.test(text)) return null;
  const enhanced = /\b([45])\.\d{1,3}\.\d{1,3}\b/.exec(text);
  const reply = /\b([45])\d\d[ -]/.exec(text);
  const klass = enhanced?.[1] ?? reply?.[1] ?? '5';
  const lower = text.toLowerCase();
  const named = knownRecipients.filter((recipient) => lower.includes(recipient.toLowerCase()));
  const diagnostic = (enhanced ? text.slice(Math.max(0, enhanced.index - 40), enhanced.index + 120) : subject)
    .replace(/\s+/g, ' ')
    .trim();
  return {
    messageIds: [],
    type: 'bounced',
    bounceType: klass === '5' ? 'hard' : 'soft',
    recipients: named.length > 0 ? named : undefined,
    diagnostic: diagnostic.slice(0, 500) || null,
  };
}

/** An ARF report: the complained-about recipient (Original-Rcpt-To / Removal-Recipient) and the original message's ids. */
export function readArf(report: ReportMessage): ProviderReport | null {
  const feedback = report.parts.find((part) => part.contentType === 'message/feedback-report');
  if (!feedback) return null;
  const fields = parseFields(feedback.body.trim());
  const recipients = [...(fields.get('original-rcpt-to') ?? []), ...(fields.get('removal-recipient') ?? [])]
    .map((value) => typedAddress(value))
    .filter((address): address is string => address !== null);
  // Original-Mail-From is our VERP return path when the reporter kept it: the most direct id.
  // (Read for the id only: the report's signature, or the return path it came to, is what is trusted.)
  const verpEmailId = emailIdNamedByReturnPath(first(fields, 'original-mail-from') ?? '');
  const identity = originalIdentity(report);
  return {
    ...identity,
    ...(verpEmailId ? { emailId: verpEmailId } : {}),
    type: 'complained',
    recipients: [...new Set(recipients)],
    diagnostic: first(fields, 'feedback-type') ?? 'abuse',
  };
}
