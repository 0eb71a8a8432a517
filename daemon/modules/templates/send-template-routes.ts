// POST /emails/send-template: the published version of a template, by slug and locale, through the
// one send pipeline (./send-template.ts). API key with email:send, or JWT.
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { tenantOf } from '../../access.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { SendAccepted, SendQuery } from '../../../shared/schemas/emails.ts';
import { SendTemplateBody } from '../../../shared/schemas/templates.ts';
import { idempotencyKeyOf } from '../emails/routes.ts';
import { replyWithSend } from '../emails/reply.ts';
import { SEND_BODY_LIMIT_BYTES } from '../emails/validate.ts';
import { sendTemplate } from './send-template.ts';

export default async function sendTemplateRoutes(app: App, deps: ModuleDeps): Promise<void> {
  app.post(
    '/emails/send-template',
    {
      config: { access: access.keyOrSession('email:send') },
      bodyLimit: SEND_BODY_LIMIT_BYTES,
      schema: {
        tags: ['emails'],
        summary:
          'Send the published version of a template (by slug and locale) with data: 202 QUEUED, or with ?sync=true SENT/FAILED',
        querystring: SendQuery,
        body: SendTemplateBody,
        response: {
          200: SendAccepted,
          202: SendAccepted,
          400: ErrorBody,
          401: ErrorBody,
          403: ErrorBody,
          409: ErrorBody,
          413: ErrorBody,
          422: ErrorBody,
          429: ErrorBody,
          503: ErrorBody,
        },
      },
    },
    async (request, reply) => {
      const answer = await sendTemplate(deps, tenantOf(request), {
        body: request.body,
        sync: request.query.sync === 'true',
        idempotencyKey: idempotencyKeyOf(request.headers['idempotency-key'], undefined),
      });
      return replyWithSend(reply, answer);
    },
  );
}
