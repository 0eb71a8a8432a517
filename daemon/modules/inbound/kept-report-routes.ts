// GET /platform/inbound-reports (platform admins): bounce and complaint reports kept without effect,
// newest first. Their counts are in GET /metrics (modules/metrics).
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { adminIdOf } from '../../access.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { KeptReportsPage, KeptReportsQuery } from '../../../shared/schemas/inbound-reports.ts';
import { readKeptReports } from './kept-report-service.ts';

export default async function keptReportRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get(
    '/platform/inbound-reports',
    {
      config: { access: access.session({ tenant: false, platformAdmin: true }) },
      schema: {
        tags: ['platform'],
        summary:
          'Bounce and complaint reports that changed nothing: unmatched (no recipient of the send) or unverified (ARF at fbl@ without a feedback-loop signature); platform admins',
        querystring: KeptReportsQuery,
        response: { 200: KeptReportsPage, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async (request) => readKeptReports(deps, { adminId: adminIdOf(request) }, request.query),
  );
}
