import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure } from '../../errors.ts';
import {
  expandTemplatePaths,
  pushTemplate,
  readTemplateFile,
  type PushResult,
  type TemplateFile,
} from '../../services/template-files.ts';

export default class TemplatesPush extends SvcCommand<typeof TemplatesPush> {
  static override operations = [
    'getTemplates',
    'getTemplatesById',
    'postTemplates',
    'postTemplatesByIdVersions',
    'patchTemplatesByIdVersionsByVersionId',
    'postTemplatesByIdVersionsByVersionIdPublish',
    'getTemplatesByIdVersionsByVersionId',
    'patchTemplatesById',
  ];
  static override summary =
    'Create or update templates from files or folders, each as a new version; --publish publishes them.';
  static override description =
    'Each file is .html or .liquid (HTML with Liquid variables) or .tsx (React Email: a module whose default export ' +
    'is the component); a folder stands for every such file inside it. Slug, name, subject, locale and the ' +
    "template's sender (from: the sender of `svc send --template` without --from) come from front-matter at the top of the file:\n\n" +
    '  ---\n  slug: welcome\n  name: Welcome\n  subject: "Welcome, {{ name }}"\n  locale: en\n  from: hello@example.com\n  ---\n\n' +
    '(in .tsx files wrap it in /* … */), or from flags, which win (--slug only with one file). The slug defaults to ' +
    'the file name. A file equal to the newest version of its locale creates nothing ("changed": false), so a ' +
    'pipeline can push on every run. Every file is read before anything is sent; --json prints one result per file ' +
    '(an array). Works with SVC_API_KEY (scopes templates:read and templates:write). Exit codes: 0 pushed (or ' +
    'unchanged), 1 refused by the API (invalid template, 409…), 2 bad file or flags.';
  static override examples = [
    '<%= config.bin %> templates push templates/welcome.html --publish',
    '<%= config.bin %> templates push templates/*.html --publish --json',
    '<%= config.bin %> templates push templates/ emails/receipt.tsx --json',
  ];
  static override strict = false;
  static override args = {
    file: Args.string({ description: 'template files (.html, .liquid, .tsx) or folders', required: true }),
  };
  static override flags = {
    slug: Flags.string({ description: 'template slug (default: front-matter, then the file name); one file only' }),
    name: Flags.string({ description: 'display name (default: front-matter, then the slug)' }),
    subject: Flags.string({ description: 'subject line, Liquid allowed (default: front-matter)' }),
    locale: Flags.string({ description: 'locale of the version, e.g. en, fr, pt-BR' }),
    publish: Flags.boolean({ description: 'publish the pushed versions (they become the ones sends use)' }),
  };

  async run(): Promise<PushResult[]> {
    const { slug, name, subject, locale, publish } = this.flags;
    const paths = await expandTemplatePaths(this.positionals);
    if (slug && paths.length > 1)
      throw new CliFailure('--slug names one template: pass it with one file only.', 2, 'USAGE');
    // Read and check every file first: a bad file stops the push before anything changes on the daemon.
    const files: { path: string; file: TemplateFile }[] = [];
    for (const path of paths) files.push({ path, file: await readTemplateFile(path, { slug, name, subject, locale }) });
    const results: PushResult[] = [];
    for (const { path, file } of files) {
      const result = await pushTemplate(this.client, file, { publish }).catch((error: unknown) => {
        if (error instanceof Error) error.message = `${path}: ${error.message}`;
        throw error;
      });
      const what = result.created ? 'Created' : result.changed ? 'Updated' : 'Unchanged:';
      this.log(
        `${what} ${result.slug} version ${result.version} (${result.locale})${result.published ? ', published' : ''}  ${path}`,
      );
      results.push(result);
    }
    return results;
  }
}
