// POST /emails/send-template's rules: the published version of a template, by slug and locale,
// rendered once with the data (so data the template cannot take is refused now, not failed later),
// then the one send pipeline (acceptSends) with the template version and data; the worker renders.
import type { TenantContext } from '../../context.ts';
import { UnprocessableError, ValidationError } from '../../errors.ts';
import type { SendTemplateBody } from '../../../shared/schemas/templates.ts';
import { acceptSends, type SendAnswer, type SendDeps } from '../emails/service.ts';
import { normalizeSend } from '../emails/validate.ts';
import { renderTemplateForSend, resolvePublishedVersion, whyNothingPublished } from './render.ts';

export interface SendTemplateInput {
  body: SendTemplateBody;
  sync: boolean;
  /** The Idempotency-Key header (wins over the body's idempotencyKey). */
  idempotencyKey: string | null;
}

export async function sendTemplate(deps: SendDeps, ctx: TenantContext, input: SendTemplateInput): Promise<SendAnswer> {
  const { slug, idempotencyKey, ...rest } = input.body;
  const { sequelize } = deps.db;
  const version = await resolvePublishedVersion(sequelize, ctx.tenantId, slug, rest.locale);
  if (!version) {
    const why = await whyNothingPublished(sequelize, ctx.tenantId, slug);
    if (why === 'unknown-slug')
      throw new UnprocessableError(`There is no template with slug "${slug}" in this tenant.`, 'TEMPLATE_NOT_FOUND');
    const where = rest.locale ? ` for locale "${rest.locale}" or the template's default locale` : '';
    throw new UnprocessableError(
      `Template "${slug}" has no published version${where}: publish one first.`,
      'TEMPLATE_NOT_PUBLISHED',
    );
  }
  const from = rest.from ?? version.defaultFrom;
  if (!from)
    throw new ValidationError(`from is required: template "${slug}" has no sender of its own.`, [
      { field: 'from', message: "is required (or set the template's from: `svc templates update --from`)" },
    ]);
  const data = rest.data ?? {};
  await renderTemplateForSend({ sequelize, reactEmailSandbox: deps.reactEmailSandbox }, ctx, {
    versionId: version.id,
    data,
  });
  const send = normalizeSend({ ...rest, from, data, locale: version.locale, templateVersionId: version.id });
  return acceptSends(deps, ctx, {
    sends: [send],
    shape: 'single',
    sync: input.sync,
    idempotencyKey: input.idempotencyKey ?? idempotencyKey ?? null,
    idempotencyFingerprint: { path: 'send-template', sync: input.sync, body: input.body },
  });
}
