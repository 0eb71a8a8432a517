// POST /emails/send-template: the published version of a template, by slug and locale, through the
// one send pipeline (acceptSends). API key with email:send, or JWT.
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../plugins/access.ts';
import { tenantOf } from '../../plugins/auth.ts';
import { UnprocessableError, ValidationError } from '../../errors.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { SendAccepted, SendQuery } from '../../../shared/schemas/emails.ts';
import { SendTemplateBody } from '../../../shared/schemas/templates.ts';
import { acceptSends } from '../emails/service.ts';
import { normalizeSend, SEND_BODY_LIMIT_BYTES } from '../emails/validate.ts';
import { quotaHeaders } from '../quota/service.ts';
import { renderTemplateForSend, resolvePublishedVersion, whyNothingPublished } from './render.ts';

export default async function sendTemplateRoutes(app: App, deps: AppDeps): Promise<void> {
  const sendDeps = { sequelize: deps.db.sequelize, config: deps.config, secrets: deps.secrets };

  app.post('/emails/send-template', {
    config: { access: access.keyOrSession('email:send') },
    bodyLimit: SEND_BODY_LIMIT_BYTES,
    schema: {
      tags: ['emails'],
      summary: 'Send the published version of a template (by slug and locale) with data: 202 QUEUED, or with ?sync=true SENT/FAILED',
      querystring: SendQuery,
      body: SendTemplateBody,
      response: { 200: SendAccepted, 202: SendAccepted, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 409: ErrorBody, 413: ErrorBody, 422: ErrorBody, 429: ErrorBody, 503: ErrorBody },
    },
  }, async (request, reply) => {
    const ctx = tenantOf(request);
    const { slug, idempotencyKey, from, ...rest } = request.body;
    if (!from) throw new ValidationError('from is required: a template does not carry a sender.', [{ field: 'from', message: 'is required' }]);
    const sequelize = deps.db.sequelize;
    const version = await resolvePublishedVersion(sequelize, ctx.tenantId, slug, rest.locale);
    if (!version) {
      const why = await whyNothingPublished(sequelize, ctx.tenantId, slug);
      if (why === 'unknown-slug') throw new UnprocessableError(`There is no template with slug "${slug}" in this tenant.`, 'TEMPLATE_NOT_FOUND');
      const where = rest.locale ? ` for locale "${rest.locale}" or the template's default locale` : '';
      throw new UnprocessableError(`Template "${slug}" has no published version${where}: publish one first.`, 'TEMPLATE_NOT_PUBLISHED');
    }
    const data = rest.data ?? {};
    // Render once now so that a template this data cannot fill is refused here, not failed later.
    await renderTemplateForSend(version.id, data, version.locale, { sequelize, tenantId: ctx.tenantId });
    const send = normalizeSend({ ...rest, from, data, locale: version.locale, templateVersionId: version.id });
    const sync = request.query.sync === 'true';
    const header = request.headers['idempotency-key'];
    const headerKey = (Array.isArray(header) ? header[0] : header)?.trim();
    const result = await acceptSends(sendDeps, ctx, [send], {
      shape: 'single',
      sync,
      idempotencyKey: headerKey ? headerKey.slice(0, 255) : (idempotencyKey ?? null),
      idempotencyFingerprint: { path: 'send-template', sync, body: request.body },
    });
    reply.headers(quotaHeaders(result.quota));
    if (result.replayed) reply.header('idempotent-replayed', 'true');
    return reply.code(result.statusCode as 200 | 202).send(result.body as SendAccepted);
  });
}
