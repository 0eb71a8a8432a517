// The kept reports as platform admins read them, and as /metrics counts them.
import type { AppDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import type { KeptReportBody, KeptReportsQuery } from '../../../shared/schemas/inbound-reports.ts';
import { KEPT_REPORT_DISPOSITIONS } from '../../../shared/schemas/inbound-reports.ts';
import type { Page } from '../../db/paging.ts';
import { countKeptReports, listKeptReports } from './kept-reports.ts';

export type KeptReportDeps = Pick<AppDeps, 'db'>;

/** GET /platform/inbound-reports: the route's access already checked the platform admin. */
export function readKeptReports(
  deps: KeptReportDeps,
  _admin: AdminContext,
  query: KeptReportsQuery,
): Promise<Page<KeptReportBody>> {
  return listKeptReports(deps.db.sequelize, query);
}

/** Every disposition and kind appears, zero included, so a rate() over them starts from the first scrape. */
export async function inboundReportMetrics(deps: KeptReportDeps): Promise<string> {
  const counts = await countKeptReports(deps.db.sequelize);
  const lines = [
    '# HELP svc_inbound_reports_kept_total Bounce and complaint reports kept without effect (unmatched: no recipient of the send; unverified: ARF at fbl@ not signed by a feedback-loop operator).',
    '# TYPE svc_inbound_reports_kept_total counter',
  ];
  for (const disposition of KEPT_REPORT_DISPOSITIONS) {
    for (const kind of ['bounce', 'complaint']) {
      const count = counts.find((c) => c.disposition === disposition && c.kind === kind)?.count ?? 0;
      lines.push(`svc_inbound_reports_kept_total{disposition="${disposition}",kind="${kind}"} ${count}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
