// What providers tell us about sent mail (Amazon SES through SNS, or a relay's DSN as simple JSON),
// turned into delivery outcomes. The outcome itself (log status, timeline, event, suppressions,
// automatic pause) is the send pipeline's recordDeliveryOutcome, so every path counts the same way.
import type { Database } from '../../db/index.ts';
import { QueryTypes } from 'sequelize';
import { recordDeliveryOutcome } from '../emails/outcomes.ts';
import { bareAddress } from '../emails/validate.ts';

export interface ProviderReport {
  /** Message-ID header values (with or without angle brackets) that may identify our log. */
  messageIds: string[];
  /** Our log's id when the report names it (a VERP return path, X-Service-Email-Id); checked before messageIds. */
  emailId?: string;
  type: 'delivered' | 'bounced' | 'complained';
  bounceType?: 'hard' | 'soft';
  /** Recipients concerned; every recipient of the log when absent. */
  recipients?: string[];
  diagnostic?: string | null;
}

function withAndWithoutBrackets(ids: string[]): string[] {
  const bare = ids.map((id) => id.trim().replace(/^<(.*)>$/, '$1')).filter((id) => id.length > 0);
  return [...new Set(bare.flatMap((id) => [id, `<${id}>`]))];
}

/**
 * Applies a report to every log carrying one of its message ids (receivers are platform-wide, so the
 * log decides the tenant). Unknown ids are not an error: providers also report mail sent by others.
 * Returns how many logs were updated.
 */
/**
 * A provider's bounce or complaint report (SES, a relay's DSN, a bounce mail). The provider is the
 * caller and has no context beyond its authenticated request: deps and the report only.
 */
export async function applyProviderReport(
  deps: { db: Pick<Database, 'sequelize'> },
  report: ProviderReport,
): Promise<number> {
  const { sequelize } = deps.db;
  const candidates = withAndWithoutBrackets(report.messageIds);
  if (candidates.length === 0 && !report.emailId) return 0;
  const columns = 'id, tenant_id, to_addresses, cc_addresses, bcc_addresses';
  const logs = await sequelize.query<{
    id: string;
    tenant_id: string;
    to_addresses: string[];
    cc_addresses: string[] | null;
    bcc_addresses: string[] | null;
  }>(
    report.emailId
      ? `SELECT ${columns} FROM email_logs WHERE id = :emailId`
      : `SELECT ${columns} FROM email_logs WHERE message_id IN (:candidates)`,
    { replacements: { candidates, emailId: report.emailId ?? null }, type: QueryTypes.SELECT },
  );
  let processed = 0;
  for (const log of logs) {
    // A report cannot make us suppress an address the send did not go to (mail reports are unauthenticated).
    const sentTo = new Set(
      [...log.to_addresses, ...(log.cc_addresses ?? []), ...(log.bcc_addresses ?? [])].map((a) => bareAddress(a)),
    );
    const named = (report.recipients ?? []).filter((r) => sentTo.has(bareAddress(r)));
    const applied = await recordDeliveryOutcome(sequelize, {
      tenantId: log.tenant_id,
      emailId: log.id,
      type: report.type,
      bounceType: report.bounceType,
      recipients: named.length > 0 ? named : undefined,
      diagnostic: report.diagnostic ?? null,
    });
    if (applied) processed++;
  }
  return processed;
}

// ---- Amazon SES notifications (the JSON inside an SNS Notification's Message) ----

interface SesMail {
  messageId?: string;
  destination?: string[];
  headers?: Array<{ name?: string; value?: string }>;
  commonHeaders?: { messageId?: string };
}

interface SesNotification {
  notificationType?: string;
  /** Configuration-set event publishing uses eventType instead of notificationType. */
  eventType?: string;
  mail?: SesMail;
  bounce?: {
    bounceType?: string;
    bounceSubType?: string;
    bouncedRecipients?: Array<{ emailAddress?: string; diagnosticCode?: string; status?: string }>;
  };
  complaint?: { complainedRecipients?: Array<{ emailAddress?: string }>; complaintFeedbackType?: string };
  delivery?: { recipients?: string[]; smtpResponse?: string };
}

export class UnreadableNotificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableNotificationError';
  }
}

/** The Message-IDs SES reports: the original header (our id) first, then SES's own id. */
function sesMessageIds(mail: SesMail | undefined): string[] {
  const ids: string[] = [];
  if (mail?.commonHeaders?.messageId) ids.push(mail.commonHeaders.messageId);
  for (const header of mail?.headers ?? []) {
    if (header.name?.toLowerCase() === 'message-id' && header.value) ids.push(header.value);
  }
  if (mail?.messageId) ids.push(mail.messageId);
  return ids;
}

const addresses = (list: Array<{ emailAddress?: string }> | undefined) =>
  (list ?? [])
    .map((entry) => entry.emailAddress)
    .filter((address): address is string => typeof address === 'string' && address.length > 0);

/**
 * Reads a Bounce, Complaint or Delivery notification. Returns null for notification types that
 * carry no outcome for us (Send, Reject, Open, …), and throws for a message that is not SES JSON.
 */
export function parseSesNotification(message: string): ProviderReport | null {
  let notification: SesNotification;
  try {
    notification = JSON.parse(message) as SesNotification;
  } catch {
    throw new UnreadableNotificationError('The SNS Message is not JSON: expected an Amazon SES notification.');
  }
  if (typeof notification !== 'object' || notification === null) {
    throw new UnreadableNotificationError('The SNS Message is not an Amazon SES notification object.');
  }
  const kind = notification.notificationType ?? notification.eventType;
  const messageIds = sesMessageIds(notification.mail);
  switch (kind ?? '') {
    case 'Bounce': {
      const recipients = notification.bounce?.bouncedRecipients;
      const diagnostic =
        recipients?.find((r) => r.diagnosticCode)?.diagnosticCode ??
        [notification.bounce?.bounceType, notification.bounce?.bounceSubType].filter(Boolean).join(' / ');
      return {
        messageIds,
        type: 'bounced',
        // Only Permanent is hard; Transient and Undetermined may succeed later and must not suppress.
        bounceType: notification.bounce?.bounceType === 'Permanent' ? 'hard' : 'soft',
        recipients: addresses(recipients),
        diagnostic: diagnostic || null,
      };
    }
    case 'Complaint':
      return {
        messageIds,
        type: 'complained',
        recipients: addresses(notification.complaint?.complainedRecipients),
        diagnostic: notification.complaint?.complaintFeedbackType ?? null,
      };
    case 'Delivery':
      return {
        messageIds,
        type: 'delivered',
        recipients: notification.delivery?.recipients ?? [],
        diagnostic: notification.delivery?.smtpResponse ?? null,
      };
    default:
      return null;
  }
}

/** SNS may only make us fetch its own https endpoints (sns.<region>.amazonaws.com). */
export function isAmazonSubscribeUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return (
      url.protocol === 'https:' &&
      /^sns\.[a-z0-9-]+\.amazonaws\.com(\.cn)?$/.test(url.hostname) &&
      !url.username &&
      !url.password &&
      (url.port === '' || url.port === '443')
    );
  } catch {
    return false;
  }
}
