// What providers tell us about sent mail (Amazon SES through SNS, a relay's DSN as simple JSON, and
// the DSN and ARF mail the inbound SMTP port receives), turned into delivery outcomes. A report
// applies only to the recipients it names that its send went to; one that names none of them (or
// names nobody, for a send with several recipients) changes nothing and is kept as unmatched
// (kept-reports.ts). The outcome itself (status, timeline, event, suppression, sending risk) is the
// send pipeline's recordDeliveryOutcome, so every path counts the same way.
import type { Database } from '../../db/index.ts';
import { logRecipients, recordDeliveryOutcome, type OutcomeDeps } from '../emails/outcomes.ts';
import { bareAddress } from '../../mail/mailboxes.ts';
import { insertKeptReport } from './kept-reports.ts';
import { logsOfReport } from '../emails/sql/lookups.ts';
import { countReportOutcome } from '../metrics/count.ts';
import type { MetricsReporter } from '../metrics/reporter.ts';

export interface ProviderReport {
  /** Message-ID header values (with or without angle brackets) that may identify our log. */
  messageIds: string[];
  /** Our log's id when the report names it (a VERP return path, X-Service-Email-Id); checked before messageIds. */
  emailId?: string;
  type: 'delivered' | 'bounced' | 'complained';
  bounceType?: 'hard' | 'soft';
  /** Recipients the report names; absent or empty: it names nobody (applies only to a one-recipient send). */
  recipients?: string[];
  diagnostic?: string | null;
}

/** Where a report came from, for the kept-report row and the log line. */
export interface ReportOrigin {
  source: 'smtp' | 'ses' | 'smtp-dsn';
  /** The envelope sender or the verified signer, when known. */
  reporter?: string | null;
}

export interface ReportDeps {
  db: Pick<Database, 'sequelize'>;
  config: OutcomeDeps['config'];
  secrets: OutcomeDeps['secrets'];
  log?: { warn(details: object, message: string): void };
  /** This node's /metrics (modules/metrics): the recipients a report applied to. */
  metrics?: Pick<MetricsReporter, 'count'>;
}

function withAndWithoutBrackets(ids: string[]): string[] {
  const bare = ids.map((id) => id.trim().replace(/^<(.*)>$/, '$1')).filter((id) => id.length > 0);
  return [...new Set(bare.flatMap((id) => [id, `<${id}>`]))];
}

/**
 * Which of the send's recipients the report is about, or why none: the named recipients the send
 * went to; without names, the send's only recipient. Delivery reports are not kept when unmatched
 * (they change nothing that matters), so they may still name every recipient.
 */
export function recipientsConcerned(
  sentTo: string[],
  named: string[] | undefined,
): { recipients: string[] } | { unmatched: string } {
  const names = [...new Set((named ?? []).map(bareAddress))];
  if (names.length === 0) {
    return sentTo.length === 1
      ? { recipients: sentTo }
      : { unmatched: `names no recipient, and the send went to ${sentTo.length} recipients` };
  }
  const matched = names.filter((recipient) => sentTo.includes(recipient));
  return matched.length > 0
    ? { recipients: matched }
    : { unmatched: `names ${names.join(', ')}, whom the send did not go to` };
}

/**
 * Applies a report to every log carrying one of its message ids (receivers are platform-wide, so the
 * log decides the tenant). A provider's report has no caller beyond its authenticated request: deps,
 * the report and where it came from. Returns how many logs it changed (a replay changes none).
 */
export async function applyProviderReport(
  deps: ReportDeps,
  report: ProviderReport,
  origin: ReportOrigin,
): Promise<number> {
  const { sequelize } = deps.db;
  const candidates = withAndWithoutBrackets(report.messageIds);
  if (candidates.length === 0 && !report.emailId) return 0;
  const logs = await logsOfReport(sequelize, { emailId: report.emailId, messageIds: candidates });
  const keep = async (reason: string, log?: { id: string; tenant_id: string }) => {
    if (report.type === 'delivered') return;
    const kept = {
      disposition: 'unmatched' as const,
      kind: report.type === 'complained' ? ('complaint' as const) : ('bounce' as const),
      source: origin.source,
      reason,
      tenantId: log?.tenant_id ?? null,
      emailId: log?.id ?? report.emailId ?? null,
      reporter: origin.reporter ?? null,
      recipients: report.recipients ?? [],
      messageIds: report.messageIds,
    };
    await insertKeptReport(sequelize, kept);
    deps.log?.warn({ ...kept, type: report.type }, `${kept.kind} report kept as unmatched: it ${reason}`);
  };
  if (logs.length === 0) await keep('matches no send of ours (Message-ID or email id)');
  let processed = 0;
  for (const log of logs) {
    const sentTo = logRecipients({
      toAddresses: log.to_addresses,
      ccAddresses: log.cc_addresses ?? [],
      bccAddresses: log.bcc_addresses ?? [],
    });
    const concerned = recipientsConcerned(sentTo, report.recipients);
    if ('unmatched' in concerned && report.type !== 'delivered') {
      await keep(concerned.unmatched, log);
      continue;
    }
    const outcome = await recordDeliveryOutcome(
      { sequelize, config: deps.config, secrets: deps.secrets },
      {
        tenantId: log.tenant_id,
        emailId: log.id,
        type: report.type,
        bounceType: report.bounceType,
        recipients: 'recipients' in concerned ? concerned.recipients : undefined,
        diagnostic: report.diagnostic ?? null,
      },
    );
    if (outcome.applied.length > 0) processed++;
    if (deps.metrics) countReportOutcome(deps.metrics, report, outcome.applied.length);
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
