// Per-destination deliverability of the tenant, and of every tenant for platform admins (issue 29,
// docs/mta.md "Sender rules and deliverability").
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, TenantHeaders } from '../../../shared/schemas/common.ts';
import {
  DeliverabilityBody,
  DeliverabilityQuery,
  PlatformDeliverabilityBody,
  PlatformDeliverabilityQuery,
} from '../../../shared/schemas/deliverability.ts';
import { deliverabilityStats, platformDeliverability } from './service.ts';

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

  app.get(
    '/platform/deliverability',
    {
      config: { access: access.session({ tenant: false, platformAdmin: true }) },
      schema: {
        tags: ['platform'],
        summary:
          "Every tenant's outcomes per mailbox provider over a period, and the tenants ranked by complaint and bounce rate, worst first (platform admins)",
        querystring: PlatformDeliverabilityQuery,
        response: { 200: PlatformDeliverabilityBody, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async (request) => platformDeliverability(deps, request.query),
  );
}
