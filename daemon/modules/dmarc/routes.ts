// DMARC aggregate reports of a sending domain, as received at the service's rua address.
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, IdParams, PageQuery, Paged, TenantHeaders } from '../../../shared/schemas/common.ts';
import { DmarcReportBody } from '../../../shared/schemas/dmarc.ts';
import { listDmarcReports } from './service.ts';

export default async function dmarcRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get(
    '/domains/:id/dmarc-reports',
    {
      config: { access: access.keyOrSession('domains:read') },
      schema: {
        tags: ['domains'],
        summary:
          'DMARC aggregate reports received for the domain: sources, message counts, DKIM/SPF results and alignment, which sources fail',
        headers: TenantHeaders,
        params: IdParams,
        querystring: PageQuery(),
        response: { 200: Paged(DmarcReportBody), 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody },
      },
    },
    async (request) =>
      listDmarcReports(deps, tenantOf(request), {
        domainId: request.params.id,
        page: request.query.page ?? 1,
        limit: request.query.limit ?? 20,
      }),
  );
}
