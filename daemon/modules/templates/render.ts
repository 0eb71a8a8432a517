// Rendering of template versions, for previews and for the send pipeline.
//
// The send worker calls `renderTemplateForSend(deps, { tenantId }, { versionId, data })`; batch and
// send-template find the version to send with `resolvePublishedVersion(sequelize, tenantId, slug, locale)`.
import { QueryTypes, type Sequelize } from 'sequelize';
import { NotFoundError } from '../../errors.ts';
import { renderLiquid, textFromHtml } from '../../render/liquid.ts';
import { compileTemplateJsx } from '../../render/react-email/compile.ts';
import type { ReactEmailSandbox } from '../../render/react-email/sandbox.ts';
import type { TemplateEditorMode } from '../../../shared/schemas/templates.ts';

/** A version rendered for one send (what the worker puts in the message). */
export interface RenderedTemplate {
  subject: string;
  html: string | null;
  text: string | null;
}

export interface RenderedVersion {
  subject: string;
  html: string;
  text: string;
}

interface RenderableVersion {
  subject: string;
  htmlBody: string | null;
  textBody: string | null;
  jsx: string | null;
}

/** JSX + props → HTML document and its text part. Nothing is stored. */
export async function renderReactEmail(
  sandbox: ReactEmailSandbox,
  jsx: string,
  props: Record<string, unknown>,
): Promise<{ html: string; text: string }> {
  const code = await compileTemplateJsx(jsx);
  const html = await sandbox.render(code, props);
  return { html, text: textFromHtml(html) };
}

export async function renderVersion(
  sandbox: ReactEmailSandbox,
  mode: TemplateEditorMode,
  version: RenderableVersion,
  data: Record<string, unknown>,
): Promise<RenderedVersion> {
  const subject = await renderLiquid('subject', version.subject, data);
  let html: string;
  if (mode === 'react-email') {
    html = (await renderReactEmail(sandbox, version.jsx ?? '', data)).html;
  } else {
    html = version.htmlBody ? await renderLiquid('htmlBody', version.htmlBody, data) : '';
  }
  const text = version.textBody
    ? await renderLiquid('textBody', version.textBody, data)
    : html
      ? textFromHtml(html)
      : '';
  return { subject, html, text };
}

export interface PublishedVersion {
  id: string;
  templateId: string;
  version: number;
  locale: string;
  editorMode: TemplateEditorMode;
  subject: string;
  htmlBody: string | null;
  textBody: string | null;
  jsx: string | null;
  /** The template's own sender (null: the send must name one). */
  defaultFrom: string | null;
}

interface VersionRow {
  id: string;
  template_id: string;
  version: number;
  locale: string;
  editor_mode: TemplateEditorMode;
  default_locale: string;
  subject: string;
  html_body: string | null;
  text_body: string | null;
  jsx: string | null;
  default_from: string | null;
  published_at: Date | null;
}

const VERSION_COLUMNS = `v.id, v.template_id, v.version, v.locale, t.editor_mode, t.default_locale, v.subject, v.html_body,
  v.text_body, v.jsx, t.default_from, v.published_at`;

function fromRow(row: VersionRow): PublishedVersion {
  return {
    id: row.id,
    templateId: row.template_id,
    version: row.version,
    locale: row.locale,
    editorMode: row.editor_mode,
    subject: row.subject,
    htmlBody: row.html_body,
    textBody: row.text_body,
    jsx: row.jsx,
    defaultFrom: row.default_from,
  };
}

/**
 * Renders one version of the tenant for sending (the version is already the recipient's locale's).
 * Plain SQL on the caller's connection, so it works in any worker thread.
 */
export async function renderTemplateForSend(
  deps: { sequelize: Sequelize; reactEmailSandbox: ReactEmailSandbox },
  ctx: { tenantId: string },
  input: { versionId: string; data: Record<string, unknown> | null },
): Promise<RenderedTemplate> {
  const { versionId, data } = input;
  const [row] = await deps.sequelize.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM template_versions v JOIN templates t ON t.id = v.template_id
      WHERE v.id = :versionId AND v.tenant_id = :tenantId AND t.tenant_id = :tenantId`,
    { replacements: { versionId, tenantId: ctx.tenantId }, type: QueryTypes.SELECT },
  );
  if (!row) throw new NotFoundError('Template version');
  const rendered = await renderVersion(deps.reactEmailSandbox, row.editor_mode, fromRow(row), data ?? {});
  return { subject: rendered.subject, html: rendered.html || null, text: rendered.text || null };
}

/** Locales to try, most specific first: `pt-BR` → `pt-BR`, `pt`; then the template's default. */
function localeCandidates(requested: string | null | undefined, defaultLocale: string): string[] {
  const out: string[] = [];
  const add = (l: string) => {
    if (!out.includes(l.toLowerCase())) out.push(l.toLowerCase());
  };
  if (requested) {
    add(requested);
    add(requested.split('-')[0]);
  }
  add(defaultLocale);
  return out;
}

/**
 * The published version of the tenant's template `slug` for `locale`, falling back to the language
 * without its region and then to the template's default locale. Null when the template does not exist
 * or has no published version in any of those locales.
 */
export async function resolvePublishedVersion(
  sequelize: Sequelize,
  tenantId: string,
  slug: string,
  locale?: string | null,
): Promise<PublishedVersion | null> {
  const rows = await sequelize.query<VersionRow>(
    `SELECT ${VERSION_COLUMNS} FROM templates t JOIN template_versions v ON v.template_id = t.id
      WHERE t.tenant_id = :tenantId AND t.slug = :slug AND v.published_at IS NOT NULL`,
    { replacements: { tenantId, slug }, type: QueryTypes.SELECT },
  );
  if (rows.length === 0) return null;
  for (const candidate of localeCandidates(locale, rows[0].default_locale)) {
    const match = rows.find((row) => row.locale.toLowerCase() === candidate);
    if (match) return fromRow(match);
  }
  return null;
}

/** Why resolvePublishedVersion found nothing, for the sentence of a 422. */
export async function whyNothingPublished(
  sequelize: Sequelize,
  tenantId: string,
  slug: string,
): Promise<'unknown-slug' | 'not-published'> {
  const [row] = await sequelize.query<{ id: string }>(
    'SELECT id FROM templates WHERE tenant_id = :tenantId AND slug = :slug',
    {
      replacements: { tenantId, slug },
      type: QueryTypes.SELECT,
    },
  );
  return row ? 'not-published' : 'unknown-slug';
}
