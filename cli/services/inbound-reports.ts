// `svc platform reports`: bounce and complaint reports the daemon kept without effect (unmatched, or an
// unverified feedback-loop report), as platform admins review them for forgeries or a misconfigured return path.
import type { SvcClient } from '../client.ts';
import type { PageOf } from '../../shared/schemas/common.ts';
import type { KeptReportBody, KeptReportsQuery } from '../../shared/schemas/inbound-reports.ts';

export function listKeptReports(client: SvcClient, query: KeptReportsQuery) {
  return client.http.request<PageOf<KeptReportBody>>('GET', '/platform/inbound-reports', { query, tenant: false });
}
