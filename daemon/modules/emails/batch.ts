// A batch request becomes one NormalizedSend per recipient, each rendered with that recipient's
// data before the pipeline accepts it:
//  - inline (subject + htmlBody/textBody): the parts are Liquid templates, rendered here per
//    recipient (HTML-escaped in the HTML body, as send-template does); the send carries the result;
//  - by slug: each recipient's locale (its own, else the batch's) picks the published version with
//    send-template's fallback (fr-CA → fr → the template's default);
//  - by templateVersionId: that version for everyone.
// Template sends are rendered here once to check this recipient's data fills them, and rendered
// again by the send worker, as send-template does. A recipient whose address or data fails is
// listed as rejected; a fault of the shared fields (bad Liquid, unknown template) fails the batch.
import type { Database } from '../../db/index.ts';
import type { TenantContext } from '../../context.ts';
import type { ReactEmailSandbox } from '../../render/react-email/sandbox.ts';
import { UnprocessableError, ValidationError, NotFoundError } from '../../errors.ts';
import type { BatchBody } from '../../../shared/schemas/emails.ts';
import { checkLiquid, renderLiquid, type TemplatePart } from '../../render/liquid.ts';
import {
  renderTemplateForSend,
  resolvePublishedVersion,
  whyNothingPublished,
  type PublishedVersion,
} from '../templates/render.ts';
import { normalizeSend, type NormalizedSend, type SendInput } from './validate.ts';

export interface BatchDeps {
  db: Pick<Database, 'sequelize'>;
  /** Renders each recipient's React Email template now, so its data is refused now, not failed later. */
  reactEmailSandbox: ReactEmailSandbox;
}

interface Rejection {
  to: string;
  reason: string;
}

type Recipient = BatchBody['recipients'][number];
type SharedFields = Omit<
  BatchBody,
  | 'recipients'
  | 'slug'
  | 'idempotencyKey'
  | 'templateVersionId'
  | 'subject'
  | 'htmlBody'
  | 'textBody'
  | 'from'
  | 'data'
  | 'locale'
>;

/** How the batch's content is produced for one recipient. */
type Content =
  | { kind: 'inline'; subject: string; htmlBody: string | null; textBody: string | null }
  | { kind: 'version'; versionId: string }
  | { kind: 'slug'; slug: string };

function contentOf(body: BatchBody): Content {
  if (body.slug) return { kind: 'slug', slug: body.slug };
  if (body.templateVersionId) return { kind: 'version', versionId: body.templateVersionId };
  if (!(body.subject && (body.htmlBody || body.textBody))) {
    throw new ValidationError('A batch needs slug, templateVersionId, or subject with htmlBody.', [
      { field: 'htmlBody', message: 'slug, templateVersionId or subject + htmlBody is required' },
    ]);
  }
  const inline = {
    kind: 'inline' as const,
    subject: body.subject,
    htmlBody: body.htmlBody ?? null,
    textBody: body.textBody ?? null,
  };
  // Syntax is the batch's fault, not a recipient's: refuse it once, whole.
  for (const part of ['subject', 'htmlBody', 'textBody'] as TemplatePart[]) {
    const source = inline[part];
    if (source) checkLiquid(part, source);
  }
  return inline;
}

function reasonOf(error: unknown): string | null {
  if (error instanceof ValidationError)
    return error.details?.map((d) => `${d.field} ${d.message}`).join('; ') ?? error.message;
  if (error instanceof UnprocessableError) return error.message;
  return null;
}

export async function buildBatchSends(
  deps: BatchDeps,
  ctx: TenantContext,
  body: BatchBody,
): Promise<{ sends: NormalizedSend[]; rejected: Rejection[] }> {
  const { tenantId } = ctx;
  if (!body.from) throw new ValidationError('A batch needs from.', [{ field: 'from', message: 'is required' }]);
  const content = contentOf(body);
  const {
    recipients,
    slug: _slug,
    idempotencyKey: _key,
    templateVersionId: _version,
    subject: _subject,
    htmlBody: _html,
    textBody: _text,
    from,
    data: sharedData,
    locale: sharedLocale,
    ...shared
  } = body;
  const versions = new Map<string, PublishedVersion | null>();

  const versionFor = async (locale: string | null): Promise<PublishedVersion | null> => {
    const key = (locale ?? '').toLowerCase();
    if (!versions.has(key))
      versions.set(
        key,
        await resolvePublishedVersion(deps.db.sequelize, tenantId, (content as { slug: string }).slug, locale),
      );
    return versions.get(key) ?? null;
  };
  if (
    content.kind === 'slug' &&
    (await whyNothingPublished(deps.db.sequelize, tenantId, content.slug)) === 'unknown-slug'
  ) {
    throw new UnprocessableError(
      `There is no template with slug "${content.slug}" in this tenant.`,
      'TEMPLATE_NOT_FOUND',
    );
  }

  const sends: NormalizedSend[] = [];
  const rejected: Rejection[] = [];
  for (const recipient of recipients) {
    try {
      sends.push(
        await sendFor(
          deps,
          tenantId,
          content,
          recipient,
          { shared, from, data: recipient.data ?? sharedData ?? {}, locale: recipient.locale ?? sharedLocale ?? null },
          versionFor,
        ),
      );
    } catch (error) {
      // A fault of the shared fields is the whole batch's fault, not this recipient's.
      if (error instanceof ValidationError && error.details?.some((d) => !d.field.startsWith('to'))) throw error;
      if (error instanceof NotFoundError) throw error;
      const reason = reasonOf(error);
      if (reason === null) throw error;
      rejected.push({ to: recipient.to, reason });
    }
  }
  return { sends, rejected };
}

async function sendFor(
  deps: BatchDeps,
  tenantId: string,
  content: Content,
  recipient: Recipient,
  input: { shared: SharedFields; from: string; data: Record<string, unknown>; locale: string | null },
  versionFor: (locale: string | null) => Promise<PublishedVersion | null>,
): Promise<NormalizedSend> {
  const base: SendInput = { ...input.shared, from: input.from, to: recipient.to, data: input.data };
  // The address first: a recipient that cannot receive mail is rejected before any rendering.
  if (content.kind === 'inline') {
    normalizeSend({ ...base, subject: 'x', textBody: 'x' });
    const render = (part: TemplatePart, source: string | null) =>
      source ? renderLiquid(part, source, input.data) : Promise.resolve(null);
    const [subject, htmlBody, textBody] = await Promise.all([
      render('subject', content.subject),
      render('htmlBody', content.htmlBody),
      render('textBody', content.textBody),
    ]);
    return normalizeSend({
      ...base,
      subject: subject ?? '',
      htmlBody: htmlBody ?? undefined,
      textBody: textBody ?? undefined,
      locale: input.locale ?? undefined,
    });
  }
  normalizeSend({
    ...base,
    templateVersionId: content.kind === 'version' ? content.versionId : '00000000-0000-0000-0000-000000000000',
  });
  let versionId: string;
  let locale: string | null = input.locale;
  if (content.kind === 'version') {
    versionId = content.versionId;
  } else {
    const version = await versionFor(input.locale);
    if (!version)
      throw new UnprocessableError(
        `no published version for locale ${input.locale ?? '(none)'} or the template's default locale`,
        'TEMPLATE_NOT_PUBLISHED',
      );
    versionId = version.id;
    locale = version.locale;
  }
  // This recipient's data must fill the template now, not fail the send later.
  await renderTemplateForSend(
    { sequelize: deps.db.sequelize, reactEmailSandbox: deps.reactEmailSandbox },
    { tenantId },
    { versionId, data: input.data },
  );
  return normalizeSend({ ...base, templateVersionId: versionId, locale: locale ?? undefined });
}
