import { Args, Flags } from '@oclif/core';
import { readFile, writeFile } from 'node:fs/promises';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import {
  latestVersion,
  parseFrontMatter,
  requireTemplate,
  serializeFrontMatter,
} from '../../services/template-files.ts';

export interface PullResult {
  slug: string;
  version: number;
  locale: string;
  published: boolean;
  file: string | null;
  content: string;
}

export default class TemplatesPull extends SvcCommand<typeof TemplatesPull> {
  static override operations = ['getTemplates', 'getTemplatesById', 'getTemplatesByIdVersionsByVersionId'];
  static override summary = 'Write a template version to a file (or stdout) in the format `push` reads.';
  static override examples = [
    '<%= config.bin %> templates pull welcome --out templates/welcome.html',
    '<%= config.bin %> templates pull receipt --published --out emails/receipt.tsx',
  ];
  static override args = { template: Args.string({ description: 'slug or id', required: true }) };
  static override flags = {
    out: Flags.string({ char: 'o', description: 'file to write (default: stdout)' }),
    locale: Flags.string({ description: "locale to pull (default: the template's default locale)" }),
    published: Flags.boolean({ description: 'pull the published version instead of the newest' }),
  };

  async run(): Promise<PullResult> {
    const template = await requireTemplate(this.client, this.args.template);
    const locale = this.flags.locale ?? template.defaultLocale;
    const version = this.flags.published
      ? template.versions.find((candidate) => candidate.published && candidate.locale === locale)
      : (latestVersion(template, locale) ?? latestVersion(template));
    if (!version)
      throw new CliFailure(
        `Template ${template.slug} has no ${this.flags.published ? 'published ' : ''}version in locale ${locale}.`,
        EXIT.refused,
        'NOT_FOUND',
      );
    const body = (template.editorMode === 'react-email' ? version.jsx : version.htmlBody) ?? '';
    // Sample data and the other fields only files carry (`data:`, `broadcast:`) stay when a file is pulled over.
    const kept = this.flags.out ? await keptFields(this.flags.out) : {};
    const content = serializeFrontMatter(
      {
        ...kept,
        slug: template.slug,
        name: template.name,
        subject: version.subject,
        locale: version.locale,
        from: template.from ?? undefined,
      },
      body,
      template.editorMode,
    );
    if (this.flags.out) {
      await writeFile(this.flags.out, content);
      this.log(`Wrote ${template.slug} version ${version.version} (${version.locale}) to ${this.flags.out}.`);
    } else if (!this.jsonEnabled()) {
      process.stdout.write(content);
    }
    return {
      slug: template.slug,
      version: version.version,
      locale: version.locale,
      published: version.published,
      file: this.flags.out ?? null,
      content,
    };
  }
}

/** The front-matter fields of the file about to be replaced that the daemon does not keep (none when it is new). */
async function keptFields(path: string): Promise<Record<string, string>> {
  const source = await readFile(path, 'utf8').catch(() => null);
  if (source === null) return {};
  const {
    slug: _slug,
    name: _name,
    subject: _subject,
    locale: _locale,
    from: _from,
    ...rest
  } = parseFrontMatter(source).fields;
  return rest;
}
