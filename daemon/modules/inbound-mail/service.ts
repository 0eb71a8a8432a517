// One message received by the inbound SMTP listener, routed by what it is and whom it was for:
// ARF complaints (at a return path, or signed by a feedback-loop operator: feedback-auth.ts) and DSNs
// (at a return path only) go through the provider receivers' outcome path (applyProviderReport), a
// plain non-delivery report to a return path likewise, the List-Unsubscribe mailto through the
// one-click unsubscribe, DMARC aggregate reports into the dmarc module. Knows no SMTP.
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import type { Secrets } from '../../secrets.ts';
import { applyProviderReport, type ProviderReport, type ReportDeps } from '../inbound/service.ts';
import { insertKeptReport } from '../inbound/kept-reports.ts';
import { getPlatformSettings } from '../../db/platform-settings.ts';
import { unsubscribe } from '../tracking/service.ts';
import { receiveAggregateReports, type DmarcLog } from '../dmarc/service.ts';
import type { InboundReader, ReadMessage, ReadWanted } from './reader.ts';
import type { InboundRecipient } from './addresses.ts';
import type { ReportMessage } from './mime.ts';
import { readArf, readDsn, readPlainNdr } from './reports.ts';
import { recipientsOfLog } from '../emails/sql/lookups.ts';
import { judgeFeedbackSigner } from './feedback-auth.ts';

export interface InboundMailDeps {
  sequelize: Sequelize;
  config: Config;
  secrets: Pick<Secrets, 'linkSigningKey' | 'encryptionKey'>;
  log: DmarcLog;
  /** Parses the raw message in its own thread, off the event loop (reader.ts). */
  reader: InboundReader;
  /** This node's /metrics: complaints and bounces applied (inbound/service.ts). */
  metrics?: ReportDeps['metrics'];
}

export interface InboundMessage {
  /** MAIL FROM; null for the null reverse-path `<>` that bounces and reports use. */
  mailFrom: string | null;
  recipients: InboundRecipient[];
  /** The raw message as it arrived, each chunk owning its buffer (reader.ts ownedChunk): moved to the reader. */
  chunks: Uint8Array[];
}

/** What was done with the message, for the SMTP reply and the log line. */
export interface InboundOutcome {
  handled: 'complaint' | 'bounce' | 'unverified' | 'unsubscribe' | 'dmarc' | 'ignored';
  /** Logs, suppressions or reports affected. */
  count: number;
}

async function applyAll(
  deps: InboundMailDeps,
  reports: ProviderReport[],
  emailId: string | undefined,
  reporter: string | null,
): Promise<number> {
  let processed = 0;
  const reportDeps = {
    db: { sequelize: deps.sequelize },
    config: deps.config,
    secrets: deps.secrets,
    log: deps.log,
    metrics: deps.metrics,
  };
  // The return path the report came to names our log more surely than anything inside the report.
  for (const report of reports)
    processed += await applyProviderReport(reportDeps, emailId ? { ...report, emailId } : report, {
      source: 'smtp',
      reporter,
    });
  return processed;
}

/** A report that changes nothing because its sender is not proven: kept as unverified, with why, and logged. */
async function keepUnverified(
  deps: InboundMailDeps,
  message: InboundMessage,
  kind: 'complaint' | 'bounce',
  report: Pick<ProviderReport, 'emailId' | 'recipients' | 'messageIds'>,
  reason: string,
): Promise<InboundOutcome> {
  const kept = {
    disposition: 'unverified' as const,
    kind,
    source: 'smtp',
    reason,
    emailId: report.emailId ?? null,
    reporter: message.mailFrom,
    recipients: report.recipients ?? [],
    messageIds: report.messageIds,
  };
  await insertKeptReport(deps.sequelize, kept);
  deps.log.warn(kept, `${kind === 'bounce' ? 'delivery' : 'feedback-loop'} report kept as unverified: ${reason}`);
  return { handled: 'unverified', count: 0 };
}

/**
 * An ARF report that did not come to a send's own return path (fbl@, another of our mailboxes): it
 * counts only when a listed feedback-loop operator signed it, the Content-Type it is read by
 * included; otherwise it is kept as unverified.
 */
async function applyFeedbackLoopReport(
  deps: InboundMailDeps,
  message: InboundMessage,
  read: ReadMessage,
  report: ReportMessage,
  arf: ProviderReport,
): Promise<InboundOutcome> {
  const { feedbackLoopDomains } = await getPlatformSettings(deps.sequelize);
  // The reader checked the signatures of every ARF report that came to no return path.
  const signer = judgeFeedbackSigner(read.feedbackSignatures ?? { results: [] }, feedbackLoopDomains, report.headers);
  if (signer.verified) return { handled: 'complaint', count: await applyAll(deps, [arf], arf.emailId, signer.signer) };
  return keepUnverified(deps, message, 'complaint', arf, signer.reason);
}

/**
 * Why a delivery report away from a return path changes nothing: anyone who saw one message of a send
 * can write a DSN naming it, its recipients and its X-Service-Email-Id, with the null sender. Only the
 * return path the service wrote into that send's envelope (or a provider receiver that authenticates
 * its caller: /webhooks/ses, /webhooks/smtp-dsn) ties a bounce to it.
 */
const NOT_AT_RETURN_PATH =
  'it is a delivery report that did not come to the return path the service wrote for a send (bounce-<email id>-<tag>@…), where alone bounces count';

/** What the reader must read for these of our recipients (the listener adds what routed recipients need). */
export function reportsWanted(config: Pick<Config, 'dnsServers'>, recipients: InboundRecipient[]): ReadWanted {
  const kinds = new Set(recipients.map((r) => r.kind));
  return {
    report: recipients.length > 0,
    dmarc: kinds.has('dmarc'),
    unsubscribeTokens: kinds.has('unsubscribe'),
    // An ARF report away from a return path counts only when signed (applyFeedbackLoopReport).
    feedbackSignatures: recipients.length === 0 || kinds.has('bounce') ? null : { dnsServers: config.dnsServers },
    routed: null,
  };
}

/**
 * `read`: the message as the listener already had it read (with reportsWanted's parts), when it was
 * read once for these recipients and for tenants' routes together (smtp/inbound.ts).
 */
export async function handleInboundMessage(
  deps: InboundMailDeps,
  message: InboundMessage,
  alreadyRead?: ReadMessage,
): Promise<InboundOutcome> {
  const bounce = message.recipients.find(
    (r): r is Extract<InboundRecipient, { kind: 'bounce' }> => r.kind === 'bounce',
  );
  const read = alreadyRead ?? (await deps.reader.read(message.chunks, reportsWanted(deps.config, message.recipients)));
  const report = read.report;
  // reportsWanted asks for it whenever one of our addresses is among the recipients.
  if (!report) throw new Error('the message was read without its MIME parts (ReadWanted.report)');

  // What the content is decides first: a complaint or a DSN may arrive at any of our addresses.
  if (report.reportType === 'feedback-report') {
    const arf = readArf(report);
    // At a send's own return path the report is tied to that send (and its recipients, rule of
    // inbound/service.ts); anywhere else only a feedback-loop operator's signature makes it count.
    if (arf && bounce)
      return { handled: 'complaint', count: await applyAll(deps, [arf], bounce.emailId, message.mailFrom) };
    if (arf) return applyFeedbackLoopReport(deps, message, read, report, arf);
  }
  if (report.reportType === 'delivery-status') {
    const reports = readDsn(report);
    if (bounce) return { handled: 'bounce', count: await applyAll(deps, reports, bounce.emailId, message.mailFrom) };
    // A DSN that reports no failure (delivered, relayed) would have changed nothing anywhere.
    if (reports.length === 0) return { handled: 'ignored', count: 0 };
    return keepUnverified(
      deps,
      message,
      'bounce',
      { ...reports[0], recipients: reports.flatMap((r) => r.recipients ?? []) },
      NOT_AT_RETURN_PATH,
    );
  }
  if (bounce) {
    const body = report.parts
      .filter((part) => part.contentType.startsWith('text/'))
      .map((part) => part.body)
      .join('\n');
    const ndr = readPlainNdr(
      report.headers,
      body,
      await recipientsOfLog(deps.sequelize, bounce.emailId),
      message.mailFrom === null,
    );
    // Anything else to a return path (an out-of-office reply, a human answering) changes nothing.
    return ndr
      ? { handled: 'bounce', count: await applyAll(deps, [ndr], bounce.emailId, message.mailFrom) }
      : { handled: 'ignored', count: 0 };
  }

  if (read.dmarc) {
    const result = await receiveAggregateReports({ sequelize: deps.sequelize, log: deps.log }, read.dmarc);
    return { handled: 'dmarc', count: result.stored };
  }
  if (read.unsubscribeTokens !== null) {
    for (const token of read.unsubscribeTokens) {
      if (
        await unsubscribe(
          { db: { sequelize: deps.sequelize }, secrets: { linkSigningKey: deps.secrets.linkSigningKey } },
          {},
          { token, via: 'unsubscribe by mail (List-Unsubscribe mailto)' },
        )
      ) {
        return { handled: 'unsubscribe', count: 1 };
      }
    }
  }
  return { handled: 'ignored', count: 0 };
}
