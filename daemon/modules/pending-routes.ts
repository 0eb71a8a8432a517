// Endpoints of the interface spec that are registered (so they appear in /openapi.json and answer
// with a clear sentence) but not built yet. Each answers 501; the README lists them.
// When an area is built, its rows leave this table and move to the area's routes.ts.
import { Type } from '@sinclair/typebox';
import type { App } from '../app-types.ts';
import { NotImplementedError } from '../errors.ts';
import { access, type Access } from '../plugins/access.ts';
import { ErrorBody } from '../../shared/schemas/common.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
interface PendingRoute {
  method: Method;
  url: string;
  access: Access;
}

export interface PendingArea {
  tag: string;
  reason: string;
  routes: PendingRoute[];
}

const r = (method: Method, url: string, rule: Access): PendingRoute => ({ method, url, access: rule });

export const PENDING_AREAS: PendingArea[] = [
  {
    tag: 'auth',
    reason: 'Admin sign-in, sessions and 2FA are being built.',
    routes: [
      r('GET', '/auth/registration-status', access.public()),
      r('POST', '/auth/register', access.public()),
      r('POST', '/auth/login', access.public()),
      r('POST', '/auth/login/verify-2fa', access.public()),
      r('POST', '/auth/forgot-password', access.public()),
      r('POST', '/auth/reset-password', access.public()),
      r('POST', '/auth/refresh', access.public()),
      r('POST', '/auth/logout', access.session({ tenant: false })),
      r('POST', '/auth/logout-all', access.session({ tenant: false })),
      r('POST', '/auth/change-password', access.session({ tenant: false })),
      r('GET', '/auth/me', access.session({ tenant: false })),
      r('POST', '/auth/verify-email', access.public()),
      r('POST', '/auth/resend-verification-email', access.public()),
      r('POST', '/auth/resend-verification', access.session({ tenant: false })),
      r('GET', '/auth/2fa/status', access.session({ tenant: false })),
      r('POST', '/auth/2fa/enable', access.session({ tenant: false })),
      r('POST', '/auth/2fa/verify', access.session({ tenant: false })),
      r('POST', '/auth/2fa/disable', access.session({ tenant: false })),
    ],
  },
  {
    tag: 'tenants',
    reason: 'Tenants, members and API keys are being built.',
    routes: [
      r('POST', '/tenants', access.session({ tenant: false })),
      r('GET', '/tenants', access.session({ tenant: false })),
      r('GET', '/tenants/:tenantId', access.session({ tenant: false })),
      r('PATCH', '/tenants/:tenantId', access.session({ tenant: false })),
      r('DELETE', '/tenants/:tenantId', access.session({ tenant: false })),
      r('POST', '/tenants/:tenantId/members', access.session({ tenant: false })),
      r('GET', '/tenants/:tenantId/members', access.session({ tenant: false })),
      r('PATCH', '/tenants/:tenantId/members/:targetAdminId/role', access.session({ tenant: false })),
      r('DELETE', '/tenants/:tenantId/members/:targetAdminId', access.session({ tenant: false })),
      r('POST', '/tenants/:tenantId/api-keys', access.session({ tenant: false })),
      r('GET', '/tenants/:tenantId/api-keys', access.session({ tenant: false })),
      r('POST', '/tenants/:tenantId/api-keys/:apiKeyId/rotate', access.session({ tenant: false })),
      r('DELETE', '/tenants/:tenantId/api-keys/:apiKeyId', access.session({ tenant: false })),
      r('POST', '/tenants/:tenantId/resume-sending', access.session({ tenant: false })),
      r('POST', '/tenants/:tenantId/block', access.session({ tenant: false, platformAdmin: true })),
      r('POST', '/tenants/:tenantId/unblock', access.session({ tenant: false, platformAdmin: true })),
    ],
  },
  {
    tag: 'platform',
    reason: 'Platform settings are being built.',
    routes: [
      r('GET', '/platform/settings', access.session({ tenant: false, platformAdmin: true })),
      r('PATCH', '/platform/settings', access.session({ tenant: false, platformAdmin: true })),
    ],
  },
  {
    tag: 'emails',
    reason: 'The send pipeline is being built.',
    routes: [
      r('POST', '/emails/send-template', access.keyOrSession('email:send')),
    ],
  },
  {
    tag: 'templates',
    reason: 'Templates are being built.',
    routes: [
      r('POST', '/templates/render-react-email', access.session()),
      r('POST', '/templates', access.session()),
      r('GET', '/templates', access.keyOrSession('templates:read')),
      r('GET', '/templates/tags', access.session()),
      r('POST', '/templates/tags', access.session()),
      r('DELETE', '/templates/tags/:tagId', access.session()),
      r('GET', '/templates/:id', access.session()),
      r('PATCH', '/templates/:id', access.session()),
      r('DELETE', '/templates/:id', access.session()),
      r('POST', '/templates/:id/duplicate', access.session()),
      r('POST', '/templates/:id/versions', access.session()),
      r('GET', '/templates/:id/versions/:versionId', access.session()),
      r('PATCH', '/templates/:id/versions/:versionId', access.session()),
      r('DELETE', '/templates/:id/versions/:versionId', access.session()),
      r('POST', '/templates/:id/versions/:versionId/publish', access.session()),
      r('POST', '/templates/:id/versions/:versionId/unpublish', access.session()),
      r('POST', '/templates/:id/versions/:versionId/preview', access.session()),
      r('GET', '/templates/:id/tags', access.session()),
      r('POST', '/templates/:id/tags/:tagId', access.session()),
      r('DELETE', '/templates/:id/tags/:tagId', access.session()),
    ],
  },
  {
    tag: 'campaigns',
    reason: 'Campaigns are not built yet.',
    routes: [
      r('POST', '/campaigns', access.keyOrSession('campaigns:write')),
      r('GET', '/campaigns', access.keyOrSession('campaigns:read')),
      r('GET', '/campaigns/:id/locale-coverage', access.keyOrSession('campaigns:read')),
      r('GET', '/campaigns/:id', access.keyOrSession('campaigns:read')),
    ],
  },
];

export function registerPendingRoutes(app: App, areas: PendingArea[] = PENDING_AREAS): void {
  for (const area of areas) {
    for (const route of area.routes) {
      app.route({
        method: route.method,
        url: route.url,
        config: { access: route.access },
        schema: {
          tags: [area.tag],
          summary: `Not implemented yet: ${area.reason}`,
          ...(route.method === 'GET' || route.method === 'DELETE' ? {} : { body: Type.Unknown() }),
          response: { 501: ErrorBody },
        },
        handler: async () => {
          throw new NotImplementedError(`${route.method} ${route.url} is not implemented yet. ${area.reason}`);
        },
      });
    }
  }
}
