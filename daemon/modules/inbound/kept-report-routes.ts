// GET /platform/inbound-reports (platform admins): bounce and complaint reports kept without effect,
// newest first. GET /metrics: their counts, for Prometheus (the scraper holds a bearer credential,
// as for /health/queues).
import { Type } from '@sinclair/typebox';
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../plugins/access.ts';
import { adminIdOf } from '../../plugins/auth.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { KeptReportsPage, KeptReportsQuery } from '../../../shared/schemas/inbound-reports.ts';
import { inboundReportMetrics, readKeptReports } from './kept-report-service.ts';

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

  app.get(
    '/metrics',
    {
      config: { access: access.bearer() },
      schema: {
        tags: ['health'],
        summary: 'Prometheus text exposition: svc_inbound_reports_kept_total by disposition and kind',
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'Prometheus text format 0.0.4' }), 401: ErrorBody },
      },
    },
    async (_request, reply) => {
      reply.type('text/plain; version=0.0.4; charset=utf-8');
      return inboundReportMetrics(deps);
    },
  );
}
