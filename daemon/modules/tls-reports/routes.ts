// TLS reports this platform sends (platform admins only; docs/mta.md "TLS reporting").
import type { FastifyRequest } from 'fastify';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { adminIdOf } from '../../access.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { TlsReportParams, TlsReportPreviewBody, TlsReportSentBody } from '../../../shared/schemas/tls-reports.ts';
import { previewTlsReport, resendTlsReport } from './service.ts';

export default async function tlsReportRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['platform'];
  const config = { access: access.session({ tenant: false, platformAdmin: true }) };
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody };
  const admin = (request: FastifyRequest) => ({ adminId: adminIdOf(request), ip: request.ip });

  app.get(
    '/platform/tls-reports/:domain/:day',
    {
      config,
      schema: {
        tags,
        summary:
          "A UTC day's TLS-RPT report for a policy domain as it is (or would be) sent, its rua addresses and what was sent (platform admins)",
        params: TlsReportParams,
        response: { 200: TlsReportPreviewBody, ...errors },
      },
    },
    async (request) => previewTlsReport(deps, admin(request), request.params),
  );

  app.post(
    '/platform/tls-reports/:domain/:day/send',
    {
      config,
      schema: {
        tags,
        summary:
          "Send a finished UTC day's TLS-RPT report again, to every rua of the domain, with the same report-id (platform admins)",
        params: TlsReportParams,
        response: { 200: TlsReportSentBody, ...errors, 409: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) => resendTlsReport(deps, admin(request), request.params),
  );
}
