// The kept reports as platform admins read them (/metrics counts them: modules/metrics/registry.ts).
import type { AppDeps } from '../../app-types.ts';
import type { AdminContext } from '../../context.ts';
import type { KeptReportBody, KeptReportsQuery } from '../../../shared/schemas/inbound-reports.ts';
import type { Page } from '../../db/paging.ts';
import { listKeptReports } from './kept-reports.ts';

export type KeptReportDeps = Pick<AppDeps, 'db'>;

/** GET /platform/inbound-reports: the route's access already checked the platform admin. */
export function readKeptReports(
  deps: KeptReportDeps,
  _admin: AdminContext,
  query: KeptReportsQuery,
): Promise<Page<KeptReportBody>> {
  return listKeptReports(deps.db.sequelize, query);
}
