// Templates kept in git: a file (.html, .liquid, .tsx) with optional front-matter, pushed as a new
// version when its content changed, and pulled back into the same format.
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { SvcClient } from '../client.ts';
import type { TemplateDetail, TemplateVersionView, TemplateEditorMode } from '../../shared/schemas/templates.ts';
import { CliFailure, EXIT } from '../errors.ts';
import { templateAdmin } from './template-admin.ts';

export interface TemplateFile {
  slug: string;
  name: string;
  subject: string;
  locale?: string;
  /** The template's own sender (front-matter `from:`), used by sends that name none. */
  from?: string;
  editorMode: TemplateEditorMode;
  /** HTML (Liquid) for html mode, the module source for react-email mode. */
  content: string;
  text?: string;
  /** Every front-matter field as written (sample `data`, `from`, `broadcast` for `svc templates check`). */
  fields: Record<string, string>;
}

/**
 * The template files named on the command line: files as given, folders searched (recursively) for
 * .html, .htm, .liquid, .tsx and .jsx files, in name order. A path that does not exist is exit 2.
 */
export async function expandTemplatePaths(paths: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => null);
    if (!info) throw new CliFailure(`Cannot read ${path}: no such file or folder.`, EXIT.usage, 'BAD_FILE');
    if (!info.isDirectory()) {
      found.push(path);
      continue;
    }
    const entries = await readdir(path, { recursive: true, withFileTypes: true });
    const inside = entries
      .filter((entry) => entry.isFile() && EXTENSIONS[extname(entry.name).toLowerCase()] !== undefined)
      .map((entry) => join(entry.parentPath, entry.name))
      .sort();
    if (inside.length === 0)
      throw new CliFailure(`${path} holds no template files (.html, .liquid, .tsx).`, EXIT.usage, 'BAD_FILE');
    found.push(...inside);
  }
  return [...new Set(found)];
}

export interface FrontMatter {
  fields: Record<string, string>;
  body: string;
}

const EXTENSIONS: Record<string, TemplateEditorMode> = {
  '.html': 'html',
  '.htm': 'html',
  '.liquid': 'html',
  '.tsx': 'react-email',
  '.jsx': 'react-email',
};
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** YAML-style scalars: "double" (with escapes, as serializeFrontMatter writes them), 'single' or bare. */
function unquote(value: string): string {
  if (/^".*"$/.test(value)) {
    try {
      return JSON.parse(value) as string;
    } catch {
      return value.slice(1, -1);
    }
  }
  return value.replace(/^'(.*)'$/, '$1');
}

/** `---` / `key: value` lines / `---` at the top; in .tsx files also inside a leading block comment. */
export function parseFrontMatter(source: string): FrontMatter {
  const match = /^(?:\/\*\s*\n)?---\r?\n([\s\S]*?)\r?\n---\r?\n(?:\s*\*\/\r?\n)?/.exec(source);
  if (!match) return { fields: {}, body: source };
  const fields: Record<string, string> = {};
  for (const line of match[1].split(/\r?\n/)) {
    const pair = /^\s*([A-Za-z][\w-]*)\s*:\s*(.*?)\s*$/.exec(line);
    if (!pair) continue;
    fields[pair[1]] = unquote(pair[2]);
  }
  return { fields, body: source.slice(match[0].length) };
}

export function serializeFrontMatter(
  fields: Record<string, string | undefined>,
  body: string,
  editorMode: TemplateEditorMode,
): string {
  const lines = Object.entries(fields)
    .filter(([, value]) => value !== undefined && value !== '')
    .map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
  const block = `---\n${lines.join('\n')}\n---\n`;
  return editorMode === 'react-email' ? `/*\n${block}*/\n${body}` : `${block}${body}`;
}

export interface PushOverrides {
  slug?: string;
  name?: string;
  subject?: string;
  locale?: string;
}

export async function readTemplateFile(path: string, overrides: PushOverrides = {}): Promise<TemplateFile> {
  const editorMode = EXTENSIONS[extname(path).toLowerCase()];
  if (!editorMode) throw new CliFailure(`${path}: use a .html, .liquid or .tsx file.`, EXIT.usage, 'BAD_FILE');
  const source = await readFile(path, 'utf8').catch(() => {
    throw new CliFailure(`Cannot read ${path}.`, EXIT.usage, 'BAD_FILE');
  });
  const { fields, body } = parseFrontMatter(source);
  const slug = overrides.slug ?? fields.slug ?? basename(path, extname(path)).toLowerCase();
  const subject = overrides.subject ?? fields.subject;
  if (!subject)
    throw new CliFailure(
      `${path} has no subject: add "subject:" to its front-matter or pass --subject.`,
      EXIT.usage,
      'MISSING_FLAG',
    );
  if (!/^[a-z0-9][a-z0-9_-]{0,99}$/.test(slug))
    throw new CliFailure(
      `"${slug}" is not a valid slug (lower-case letters, digits, - and _): set "slug:" or pass --slug.`,
      EXIT.usage,
      'BAD_FILE',
    );
  return {
    slug,
    name: overrides.name ?? fields.name ?? slug,
    subject,
    locale: overrides.locale ?? fields.locale,
    ...(fields.from ? { from: fields.from } : {}),
    editorMode,
    content: body,
    text: fields.text,
    fields,
  };
}

export async function findTemplate(client: SvcClient, slugOrId: string): Promise<TemplateDetail | null> {
  if (UUID.test(slugOrId)) return client.getTemplate(slugOrId);
  const page = await client.listTemplates({ search: slugOrId, limit: 100 });
  const summary = page.data.find((template) => template.slug === slugOrId);
  return summary ? client.getTemplate(summary.id) : null;
}

export async function requireTemplate(client: SvcClient, slugOrId: string): Promise<TemplateDetail> {
  const template = await findTemplate(client, slugOrId);
  if (!template)
    throw new CliFailure(
      `No template "${slugOrId}" in this tenant: see \`svc templates list\`.`,
      EXIT.refused,
      'NOT_FOUND',
    );
  return template;
}

/** The newest version, optionally of one locale. */
export function latestVersion(template: TemplateDetail, locale?: string): TemplateVersionView | undefined {
  return [...template.versions]
    .filter((version) => !locale || version.locale === locale)
    .sort((a, b) => b.version - a.version)[0];
}

export interface PushResult {
  templateId: string;
  slug: string;
  versionId: string;
  version: number;
  locale: string;
  created: boolean;
  changed: boolean;
  published: boolean;
}

function sameContent(version: TemplateVersionView, file: TemplateFile): boolean {
  const body = file.editorMode === 'react-email' ? version.jsx : version.htmlBody;
  return (
    version.subject === file.subject &&
    body === file.content &&
    (file.text === undefined || version.textBody === file.text)
  );
}

/**
 * Creates the template, or adds a version when the file differs from the newest version of its
 * locale; an unchanged file creates nothing, so pushing in every CI run is safe.
 */
export async function pushTemplate(
  client: SvcClient,
  file: TemplateFile,
  options: { publish: boolean },
): Promise<PushResult> {
  const bodyFields = file.editorMode === 'react-email' ? { jsx: file.content } : { htmlBody: file.content };
  const existing = await findTemplate(client, file.slug);
  let template: TemplateDetail;
  let version: TemplateVersionView;
  let created = false;
  let changed = true;
  let senderChanged = false;
  if (!existing) {
    template = (await client.createTemplate({
      name: file.name,
      slug: file.slug,
      editorMode: file.editorMode,
      subject: file.subject,
      ...bodyFields,
      ...(file.text !== undefined ? { textBody: file.text } : {}),
      ...(file.locale ? { locale: file.locale } : {}),
      ...(file.from ? { from: file.from } : {}),
    })) as TemplateDetail;
    created = true;
    const first = latestVersion(template);
    if (!first) throw new CliFailure(`The daemon created template ${file.slug} without a version.`, EXIT.daemon);
    version = first;
  } else {
    template = existing;
    if (template.editorMode !== file.editorMode) {
      throw new CliFailure(
        `Template ${file.slug} is a ${template.editorMode} template; this file is ${file.editorMode}.`,
        EXIT.refused,
        'EDITOR_MODE_MISMATCH',
      );
    }
    if (file.from !== undefined && file.from !== template.from) {
      template = await templateAdmin.update(client, template.id, { from: file.from });
      senderChanged = true;
    }
    const locale = file.locale ?? template.defaultLocale;
    const newest = latestVersion(template, locale);
    if (newest && sameContent(newest, file)) {
      version = newest;
      changed = senderChanged;
    } else {
      const fresh = await client.createTemplateVersion(template.id, { locale });
      version = await client.updateTemplateVersion(template.id, fresh.id, {
        subject: file.subject,
        ...bodyFields,
        ...(file.text !== undefined ? { textBody: file.text } : {}),
      });
    }
  }
  let published = version.published;
  if (options.publish && !published) {
    await client.publishTemplateVersion(template.id, version.id);
    published = true;
  }
  return {
    templateId: template.id,
    slug: template.slug,
    versionId: version.id,
    version: version.version,
    locale: version.locale,
    created,
    changed,
    published,
  };
}
