// The daily TLS-RPT job (RFC 8460 §4–5, docs/mta.md), a maintenance task: each (finished UTC day,
// policy domain) that has counts (tls_report_counts, written by the MTA loop's commits) becomes one
// aggregate report, sent once, whichever daemon claims it first (tls_report_sends), to every `rua` of
// `_smtp._tls.<domain>`: POSTed gzipped to https ones, and to mailto ones as a multipart/report system
// mail the system worker DKIM-signs with the platform's key. An https rua that refuses is tried again,
// alone and with the same report id, after each lease, up to HTTPS_TRIES times; the addresses that took
// the report are not sent it twice. Counts and marks past the retention go first.
import type { Sequelize } from 'sequelize';
import type { Config } from '../config.ts';
import type { Sql } from '../db/sql.ts';
import { getPlatformSettings } from '../db/platform-settings.ts';
import { isFullyQualifiedName } from '../ehlo-name.ts';
import { sendSystemMail, resolveSystemSender, type SystemMailDeps, type SystemSender } from '../mail/system-mail.ts';
import { systemMailDomain } from '../mail/addresses.ts';
import type { WorkerContext } from '../mail/worker-context.ts';
import { createDnsClient, type DnsClient } from './dns-query.ts';
import {
  claimTlsReport,
  dueTlsReports,
  pruneTlsReports,
  recordTlsReportOutcome,
  tlsReportCounts,
} from './sql/tls-report.ts';
import {
  composeReportMail,
  gzipReport,
  postReport,
  reportingAddresses,
  TlsReportCollector,
  type TlsRptReport,
} from './tls-report.ts';

/** How long a daemon holds a report it is sending before another may take it over. */
const REPORT_LEASE_MS = 10 * 60_000;
/** Reports one run takes on at most; the rest wait for the next run. */
const REPORTS_PER_RUN = 200;
/** Days of counts kept: a report not sent by then (its rua never answered) is given up. */
export const TLS_REPORT_RETENTION_DAYS = 14;
const DAY_MS = 86_400_000;

/**
 * Times an https rua is tried (once per lease, so over ~1.5 h) before the report is finished without it:
 * RFC 8460 §5.3 leaves retrying to the submitter; a receiver down for longer gets the next day's report.
 */
const HTTPS_TRIES = 10;

export interface AddressOutcome {
  uri: string;
  ok: boolean;
  detail: string;
  /** Times this address was tried (absent in reports finished before retries were counted: 1). */
  tries?: number;
}

export interface SentTlsReport {
  day: string;
  domain: string;
  report: TlsRptReport;
  outcomes: AddressOutcome[];
}

export interface TlsReportRunOptions {
  /** The moment the run takes as now: days before its UTC day are finished. */
  now?: Date;
  /** Roots trusted for https rua hosts besides node's (tests pass their CA). */
  ca?: string[];
}

/** One run: the pruning, then every due report that this worker claims is built and sent. */
export async function sendTlsReports(ctx: WorkerContext, options: TlsReportRunOptions = {}): Promise<SentTlsReport[]> {
  const { sql, config, log, workerId } = ctx;
  const now = options.now ?? new Date();
  // First, so that a day past the retention is dropped rather than reported late.
  const pruned = await pruneTlsReports(sql, now, TLS_REPORT_RETENTION_DAYS);
  if (pruned > 0) log.info({ pruned }, 'old TLS report counts removed');
  const sent: SentTlsReport[] = [];
  const due = await dueTlsReports(sql, now, REPORTS_PER_RUN);
  if (due.length > 0) {
    const dns = createDnsClient({ servers: config.dnsServers });
    const sender = await resolveSystemSender(ctx.sequelize, config);
    const submitter = await tlsReportSubmitter(ctx.sequelize, config, sender);
    for (const item of due) {
      const claim = await claimTlsReport(sql, item, workerId, REPORT_LEASE_MS);
      if (!claim) continue;
      const report = await buildTlsReport(sql, item, submitter, claim.reportId);
      const rua = await reportingAddresses(dns, item.domain);
      // No answer is not "no record": the lease runs out and a later run asks again.
      if (rua.unanswered) {
        log.warn({ domain: item.domain, day: item.day }, 'TLS report not sent: _smtp._tls did not answer');
        continue;
      }
      const before = new Map((claim.outcomes as AddressOutcome[]).map((outcome) => [outcome.uri, outcome]));
      const outcomes = await deliverTlsReport(ctx, {
        item,
        report,
        rua,
        sender,
        submitter,
        dns,
        ca: options.ca,
        before,
      });
      const tried = new Set(outcomes.map((outcome) => outcome.uri));
      const all = [...[...before.values()].filter((outcome) => !tried.has(outcome.uri)), ...outcomes];
      // An https rua that refused and has tries left: kept for the run after the lease (the others are not
      // sent it again).
      const retry = outcomes.filter((outcome) => !outcome.ok && (outcome.tries ?? 1) < HTTPS_TRIES);
      if (retry.length > 0) {
        await recordTlsReportOutcome(sql, item, workerId, report['report-id'], all, false);
        log.warn({ domain: item.domain, day: item.day, outcomes }, 'TLS report not delivered everywhere; will retry');
        continue;
      }
      await recordTlsReportOutcome(sql, item, workerId, report['report-id'], all, true);
      if (outcomes.length > 0) log.info({ domain: item.domain, day: item.day, outcomes: all }, 'TLS report sent');
      sent.push({ ...item, report, outcomes: all });
    }
  }
  return sent;
}

export interface TlsReportSubmitter {
  organizationName: string;
  contactInfo: string;
  /** The submitter's domain, for the TLS-Report-Submitter header and the file name (§5.3). */
  domain: string;
}

/**
 * Who the reports say they come from (RFC 8460 §4.4): the platform settings tlsReportOrganization and
 * tlsReportContact; unset, the platform's own domain (PUBLIC_URL's host), else the EHLO name when it is a
 * name, and `mailto:` the system sender. Never `localhost`: a receiver cannot tell whose report that is.
 */
export async function tlsReportSubmitter(
  sequelize: Sequelize,
  config: Pick<Config, 'publicUrl' | 'ehloName'>,
  sender: Pick<SystemSender, 'address' | 'domain'>,
): Promise<TlsReportSubmitter> {
  const settings = await getPlatformSettings(sequelize);
  const named = [systemMailDomain(config), config.ehloName, sender.domain].find(isFullyQualifiedName);
  return {
    organizationName: settings.tlsReportOrganization ?? named ?? sender.domain,
    contactInfo: settings.tlsReportContact ?? `mailto:${sender.address}`,
    domain: named ?? sender.domain,
  };
}

/**
 * Sends one report to the rua addresses `before` does not record as reached (all of them when it is
 * empty): POSTed to https ones, a system mail to mailto ones. Answers each address's outcome.
 */
export async function deliverTlsReport(
  deps: SystemMailDeps,
  input: {
    item: { day: string; domain: string };
    report: TlsRptReport;
    rua: { https: string[]; mailto: string[] };
    sender: Pick<SystemSender, 'from'>;
    submitter: TlsReportSubmitter;
    dns: DnsClient;
    ca?: string[];
    before?: Map<string, AddressOutcome>;
  },
): Promise<AddressOutcome[]> {
  const { item, report, rua, before = new Map<string, AddressOutcome>() } = input;
  const outcomes: AddressOutcome[] = [];
  const https = rua.https.filter((url) => !before.get(url)?.ok);
  if (https.length > 0) {
    const body = gzipReport(report);
    for (const url of https) {
      const posted = await postReport(url, body, { ca: input.ca, dns: input.dns });
      outcomes.push({ uri: url, ok: posted.ok, detail: posted.detail, tries: (before.get(url)?.tries ?? 0) + 1 });
    }
  }
  for (const address of rua.mailto) {
    if (before.get(`mailto:${address}`)?.ok) continue;
    const raw = await composeReportMail({
      report,
      domain: item.domain,
      from: input.sender.from,
      to: [address],
      submitter: input.submitter.domain,
    });
    const { jobId } = await sendSystemMail(deps, {
      to: address,
      subject: `TLS report for ${item.domain} (${item.day})`,
      raw: raw.toString('base64'),
      signHeaders: ['TLS-Report-Domain', 'TLS-Report-Submitter'],
    });
    outcomes.push({ uri: `mailto:${address}`, ok: true, detail: `system mail job ${jobId}`, tries: 1 });
  }
  return outcomes;
}

/** The day's counts of one policy domain as RFC 8460's aggregate report, 00:00:00 to 23:59:59 UTC. */
export async function buildTlsReport(
  sql: Sql,
  item: { day: string; domain: string },
  submitter: TlsReportSubmitter,
  /** The id an earlier try gave it: a report sent again is the same report. */
  reportId: string | null,
): Promise<TlsRptReport> {
  const collector = new TlsReportCollector();
  for (const row of await tlsReportCounts(sql, item))
    collector.record(
      { type: row.policyType, strings: row.policyStrings, domain: item.domain, lookupFailure: null },
      { host: row.mxHost, failure: row.resultType || null },
      { sendingIp: row.sendingIp || undefined, receivingIp: row.receivingIp || undefined },
      row.sessions,
    );
  const start = new Date(`${item.day}T00:00:00Z`);
  const [{ report }] = collector.drain(
    { start, end: new Date(start.getTime() + DAY_MS - 1000) },
    {
      organizationName: submitter.organizationName,
      contactInfo: submitter.contactInfo,
    },
  );
  return reportId ? { ...report, 'report-id': reportId } : report;
}
