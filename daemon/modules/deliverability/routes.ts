// Per-destination deliverability of the tenant (issue 29, docs/mta.md "Sender rules and deliverability").
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../plugins/access.ts';
import { tenantOf } from '../../plugins/auth.ts';
import { ErrorBody, TenantHeaders } from '../../../shared/schemas/common.ts';
import { DeliverabilityBody, DeliverabilityQuery } from '../../../shared/schemas/deliverability.ts';
import { deliverabilityStats } from './service.ts';

export default async function deliverabilityRoutes(app: App, deps: ModuleDeps): Promise<void> {
  app.get(
    '/stats/deliverability',
    {
      config: { access: access.keyOrSession('email:read') },
      schema: {
        tags: ['emails'],
        summary:
          'Delivered, deferred, bounced and complained recipients per mailbox provider (told by MX host names) per UTC day, with the totals and rates of the period',
        headers: TenantHeaders,
        querystring: DeliverabilityQuery,
        response: { 200: DeliverabilityBody, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async (request) => deliverabilityStats(deps, tenantOf(request), request.query),
  );
}
