// SMTP TLS reporting (RFC 8460): every session's TLS outcome is counted per policy (domain, type,
// policy text), and once a day each domain that publishes `_smtp._tls` gets the aggregate JSON report,
// gzipped, at each of its `rua` addresses: POSTed to https ones (§5.4), mailed to mailto ones (§5.3).
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import { gzipSync } from 'node:zlib';
import MailComposer from 'nodemailer/lib/mail-composer';
import { lookupThrough, recordData, type DnsClient } from './dns-query.ts';
import type { TlsAttempt } from './pool.ts';
import type { AppliedPolicy } from './tls-policy.ts';

export interface TlsRptFailureDetail {
  'result-type': string;
  'sending-mta-ip'?: string;
  'receiving-mx-hostname'?: string;
  'receiving-ip'?: string;
  'failed-session-count': number;
}

export interface TlsRptPolicyResult {
  policy: {
    'policy-type': 'sts' | 'tlsa' | 'no-policy-found';
    'policy-string'?: string[];
    'policy-domain': string;
    'mx-host'?: string[];
  };
  summary: { 'total-successful-session-count': number; 'total-failure-session-count': number };
  'failure-details'?: TlsRptFailureDetail[];
}

export interface TlsRptReport {
  'organization-name': string;
  'date-range': { 'start-datetime': string; 'end-datetime': string };
  'contact-info': string;
  'report-id': string;
  policies: TlsRptPolicyResult[];
}

/** One session's TLS outcome under the policy it was tried under, as the MTA loop counts it. */
export interface TlsSession {
  policy: AppliedPolicy;
  host: string;
  /** The RFC 8460 result type, or null: TLS as the policy asked. */
  failure: string | null;
  sendingIp?: string;
  receivingIp?: string;
}

/** The sessions of one delivery attempt: each TLS attempt under its host's policy. */
export function tlsSessionsOf(
  attempts: TlsAttempt[],
  policyOf: (host: string) => AppliedPolicy,
  sendingIp?: string | null,
): TlsSession[] {
  return attempts.map((attempt) => {
    const policy = policyOf(attempt.host);
    return {
      policy,
      host: attempt.host,
      failure: attempt.failure ?? policy.lookupFailure,
      ...(sendingIp ? { sendingIp } : {}),
      ...(attempt.address ? { receivingIp: attempt.address } : {}),
    };
  });
}

interface Counts {
  policy: AppliedPolicy;
  successes: number;
  failures: Map<string, TlsRptFailureDetail>;
}

/** Sums sessions per policy into reports: the daily job feeds it one day's counts of one domain. */
export class TlsReportCollector {
  private readonly byPolicy = new Map<string, Counts>();

  /**
   * `sessions` sessions (or policy look-ups that stopped one) with `policy`; `failure` null = TLS as
   * the policy asked.
   */
  record(
    policy: AppliedPolicy,
    attempt: Pick<TlsAttempt, 'host' | 'failure'>,
    where: { sendingIp?: string; receivingIp?: string } = {},
    sessions = 1,
  ): void {
    const key = JSON.stringify([policy.domain, policy.type, policy.strings]);
    let counts = this.byPolicy.get(key);
    if (!counts) this.byPolicy.set(key, (counts = { policy, successes: 0, failures: new Map() }));
    const failure = attempt.failure ?? policy.lookupFailure;
    if (failure === null) {
      counts.successes += sessions;
      return;
    }
    const detailKey = JSON.stringify([failure, attempt.host, where.sendingIp, where.receivingIp]);
    const detail = counts.failures.get(detailKey) ?? {
      'result-type': failure,
      ...(where.sendingIp ? { 'sending-mta-ip': where.sendingIp } : {}),
      'receiving-mx-hostname': attempt.host,
      ...(where.receivingIp ? { 'receiving-ip': where.receivingIp } : {}),
      'failed-session-count': 0,
    };
    detail['failed-session-count'] += sessions;
    counts.failures.set(detailKey, detail);
  }

  /** The reports of the period, one per policy domain, and an empty collector for the next one. */
  drain(range: { start: Date; end: Date }, submitter: { organizationName: string; contactInfo: string }) {
    const byDomain = new Map<string, TlsRptPolicyResult[]>();
    for (const { policy, successes, failures } of this.byPolicy.values()) {
      const failed = [...failures.values()].reduce((sum, detail) => sum + detail['failed-session-count'], 0);
      const result: TlsRptPolicyResult = {
        policy: {
          'policy-type': policy.type,
          ...(policy.strings.length > 0 ? { 'policy-string': policy.strings } : {}),
          'policy-domain': policy.domain,
          ...(policy.type === 'sts'
            ? { 'mx-host': policy.strings.filter((l) => /^mx\s*:/.test(l)).map((l) => l.replace(/^mx\s*:\s*/, '')) }
            : {}),
        },
        summary: { 'total-successful-session-count': successes, 'total-failure-session-count': failed },
        ...(failed > 0 ? { 'failure-details': [...failures.values()] } : {}),
      };
      byDomain.set(policy.domain, [...(byDomain.get(policy.domain) ?? []), result]);
    }
    this.byPolicy.clear();
    return [...byDomain].map(([domain, policies]): { domain: string; report: TlsRptReport } => ({
      domain,
      report: {
        'organization-name': submitter.organizationName,
        'date-range': { 'start-datetime': range.start.toISOString(), 'end-datetime': range.end.toISOString() },
        'contact-info': submitter.contactInfo,
        'report-id': `${range.start.toISOString()}_${domain}_${randomUUID()}`,
        policies,
      },
    }));
  }
}

/**
 * The `rua` addresses of `_smtp._tls.<domain>` (RFC 8460 §3), split by kind; none = do not report.
 * `unanswered`: the look-up timed out or failed (ask again later), as opposed to no record.
 */
export async function reportingAddresses(
  dns: DnsClient,
  domain: string,
): Promise<{ https: string[]; mailto: string[]; unanswered?: true }> {
  const reply = await dns.query(`_smtp._tls.${domain}`, 'TXT');
  if (reply.kind === 'timeout' || reply.kind === 'error') return { https: [], mailto: [], unanswered: true };
  const records =
    reply.kind === 'answer'
      ? reply.answers.map((answer) => {
          const data = recordData<Buffer | string | (Buffer | string)[]>(answer);
          return (Array.isArray(data) ? data : [data]).map(String).join('');
        })
      : [];
  const ours = records.filter((record) => /^v=TLSRPTv1\s*;/.test(record.trim()));
  if (ours.length !== 1) return { https: [], mailto: [] };
  const rua = /(?:^|;)\s*rua=([^;]+)/.exec(ours[0])?.[1] ?? '';
  const uris = rua
    .split(',')
    .map((uri) => uri.trim())
    .filter(Boolean);
  return {
    https: uris.filter((uri) => uri.startsWith('https://')),
    mailto: uris.filter((uri) => uri.startsWith('mailto:')).map((uri) => decodeURIComponent(uri.slice(7))),
  };
}

/**
 * A TLS report mail (§5.3's TLS-Report-Domain header) sent by the platform (no tenant: tenants cannot
 * make one and so cannot opt their own mail out of a destination's TLS policy).
 */
export function isTlsReportMail(row: { tenantId: string | null; message: Buffer }): boolean {
  if (row.tenantId !== null) return false;
  const end = row.message.indexOf('\r\n\r\n');
  const header = row.message.subarray(0, end >= 0 ? end : Math.min(row.message.length, 65_536)).toString('latin1');
  return /^TLS-Report-Domain:/im.test(header);
}

export function gzipReport(report: TlsRptReport): Buffer {
  return gzipSync(JSON.stringify(report));
}

/** §5.4: POST of the gzipped report as application/tlsrpt+gzip; a 2xx is a delivery. */
export function postReport(
  url: string,
  body: Buffer,
  options: { ca?: string[]; timeoutMs?: number; dns?: DnsClient } = {},
) {
  return new Promise<{ ok: boolean; status: number | null; detail: string }>((resolve) => {
    const request = https.request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/tlsrpt+gzip', 'content-length': body.length },
        timeout: options.timeoutMs ?? 30_000,
        ...(options.ca ? { ca: options.ca } : {}),
        ...(options.dns ? { lookup: lookupThrough(options.dns) } : {}),
        agent: false,
      },
      (response) => {
        response.resume();
        const status = response.statusCode ?? 0;
        resolve({ ok: status >= 200 && status < 300, status, detail: `HTTP ${status}` });
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', (error) => resolve({ ok: false, status: null, detail: error.message }));
    request.end(body);
  });
}

/** §5.3: the report as a multipart/report mail with the gzipped JSON attached, ready for the spool. */
export async function composeReportMail(input: {
  report: TlsRptReport;
  domain: string;
  from: string;
  to: string[];
  submitter: string;
}): Promise<Buffer> {
  const { report, domain } = input;
  const start = report['date-range']['start-datetime'];
  const end = report['date-range']['end-datetime'];
  const fileName = `${input.submitter}!${domain}!${Date.parse(start) / 1000}!${Date.parse(end) / 1000}.json.gz`;
  const composer = new MailComposer({
    from: input.from,
    to: input.to,
    subject: `Report Domain: ${domain} Submitter: ${input.submitter} Report-ID: <${report['report-id']}>`,
    headers: { 'TLS-Report-Domain': domain, 'TLS-Report-Submitter': input.submitter },
    text: `This is an aggregate TLS report from ${input.submitter} for ${domain}.`,
    attachments: [{ filename: fileName, content: gzipReport(report), contentType: 'application/tlsrpt+gzip' }],
  });
  const node = composer.compile();
  // RFC 8460 §5.3: the top level is multipart/report with report-type "tlsrpt".
  node.setHeader('Content-Type', 'multipart/report; report-type="tlsrpt"');
  return node.build();
}
