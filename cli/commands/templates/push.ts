import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pushTemplate, readTemplateFile, type PushResult } from '../../services/template-files.ts';

export default class TemplatesPush extends SvcCommand<typeof TemplatesPush> {
  static override summary = 'Create or update a template from a file, as a new version; --publish publishes it.';
  static override description =
    'The file is .html or .liquid (HTML with Liquid variables) or .tsx (React Email: a module whose default export ' +
    'is the component). Slug, name, subject and locale come from front-matter at the top of the file:\n\n' +
    '  ---\n  slug: welcome\n  name: Welcome\n  subject: "Welcome, {{ name }}"\n  locale: en\n  ---\n\n' +
    '(in .tsx files wrap it in /* … */), or from flags, which win. The slug defaults to the file name. A file equal ' +
    'to the newest version of its locale creates nothing ("changed": false), so a pipeline can push on every run. ' +
    'Exit codes: 0 pushed (or unchanged), 1 refused by the API (invalid template, 409…), 2 bad file or flags.';
  static override examples = [
    '<%= config.bin %> templates push templates/welcome.html --publish',
    '<%= config.bin %> templates push emails/receipt.tsx --slug receipt --subject "Your receipt" --json',
    'for f in templates/*.liquid; do <%= config.bin %> templates push "$f" --publish --json || exit 1; done',
  ];
  static override args = { file: Args.string({ description: 'template file (.html, .liquid, .tsx)', required: true }) };
  static override flags = {
    slug: Flags.string({ description: 'template slug (default: front-matter, then the file name)' }),
    name: Flags.string({ description: 'display name (default: front-matter, then the slug)' }),
    subject: Flags.string({ description: 'subject line, Liquid allowed (default: front-matter)' }),
    locale: Flags.string({ description: 'locale of the version, e.g. en, fr, pt-BR' }),
    publish: Flags.boolean({ description: 'publish the pushed version (it becomes the one sends use)' }),
  };

  async run(): Promise<PushResult> {
    const { slug, name, subject, locale, publish } = this.flags;
    const file = await readTemplateFile(this.args.file, { slug, name, subject, locale });
    const result = await pushTemplate(this.client, file, { publish });
    const what = result.created ? 'Created' : result.changed ? 'Updated' : 'Unchanged:';
    this.log(`${what} ${result.slug} version ${result.version} (${result.locale})${result.published ? ', published' : ''}.`);
    return result;
  }
}
