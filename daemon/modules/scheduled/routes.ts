// Scheduled emails (spec §4 "Scheduled emails"): email:send to create and cancel, email:read to list.
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody, IdParams } from '../../../shared/schemas/common.ts';
import { ScheduledEmail, ScheduledPage, ScheduledQuery, ScheduleEmailBody } from '../../../shared/schemas/scheduled.ts';
import { SEND_BODY_LIMIT_BYTES } from '../emails/validate.ts';
import { cancelScheduledEmail, listScheduledEmails, scheduleEmail } from './service.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };

export default async function scheduledRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['scheduled-emails'];

  app.post(
    '/scheduled-emails',
    {
      config: { access: access.keyOrSession('email:send') },
      bodyLimit: SEND_BODY_LIMIT_BYTES,
      schema: {
        tags,
        summary:
          'Schedule a send for sendAt (IANA timezone, default Europe/Madrid; a sendAt without offset is read in it)',
        body: ScheduleEmailBody,
        response: { 201: ScheduledEmail, ...errors, 413: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => reply.code(201).send(await scheduleEmail(deps, tenantOf(request), request.body)),
  );

  app.get(
    '/scheduled-emails',
    {
      config: { access: access.keyOrSession('email:read') },
      schema: {
        tags,
        summary: 'Scheduled emails by sendAt; filter by status',
        querystring: ScheduledQuery,
        response: { 200: ScheduledPage, ...errors },
      },
    },
    async (request) => listScheduledEmails(deps, tenantOf(request), request.query),
  );

  app.delete(
    '/scheduled-emails/:id',
    {
      config: { access: access.keyOrSession('email:send') },
      schema: {
        tags,
        summary: 'Cancel a PENDING scheduled email and remove its queued job (409 otherwise)',
        params: IdParams,
        response: { 200: ScheduledEmail, ...errors, 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request) => cancelScheduledEmail(deps, tenantOf(request), { id: request.params.id }),
  );
}
