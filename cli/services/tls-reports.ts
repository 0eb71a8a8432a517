// TLS-RPT reports this platform sends (platform admins): the calls behind `svc tls-reports …`.
import type { SvcClient } from '../client.ts';
import type { TlsReportPreviewBody, TlsReportSentBody } from '../../shared/schemas/tls-reports.ts';

const path = (domain: string, day: string) =>
  `/platform/tls-reports/${encodeURIComponent(domain)}/${encodeURIComponent(day)}`;

export function previewTlsReport(client: SvcClient, domain: string, day: string) {
  return client.http.request<TlsReportPreviewBody>('GET', path(domain, day), { tenant: false });
}

export function resendTlsReport(client: SvcClient, domain: string, day: string) {
  return client.http.request<TlsReportSentBody>('POST', `${path(domain, day)}/send`, { tenant: false });
}

/** Yesterday in UTC: the last day whose report is final. */
export function yesterdayUtc(now = new Date()): string {
  return new Date(now.getTime() - 86_400_000).toISOString().slice(0, 10);
}
