// GET /platform/system-mail[/{id}]: system mail captured when no relay is configured (platform admins only).
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { adminIdOf } from '../../access.ts';
import { ErrorBody, IdParams, Paged } from '../../../shared/schemas/common.ts';
import { SystemMailMessage, SystemMailQuery, SystemMailSummary } from '../../../shared/schemas/system-mail.ts';
import { listSystemMail, readSystemMail } from './service.ts';

export default async function systemMailRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['platform'];
  const config = { access: access.session({ tenant: false, platformAdmin: true }) };
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };

  app.get(
    '/platform/system-mail',
    {
      config,
      schema: {
        tags,
        summary:
          'System mail captured without a relay (resets, verifications, invitations), newest first (platform admins)',
        querystring: SystemMailQuery,
        response: { 200: Paged(SystemMailSummary), ...errors },
      },
    },
    async (request) => listSystemMail(deps, { adminId: adminIdOf(request) }, request.query),
  );

  app.get(
    '/platform/system-mail/:id',
    {
      config,
      schema: {
        tags,
        summary: 'One captured system mail, whole (platform admins)',
        params: IdParams,
        response: { 200: SystemMailMessage, 404: ErrorBody, ...errors },
      },
    },
    async (request) => readSystemMail(deps, { adminId: adminIdOf(request) }, { id: request.params.id }),
  );
}
