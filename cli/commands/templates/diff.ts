import { Args, Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { parseData } from '../../services/send.ts';
import { expandTemplatePaths, readTemplateFile } from '../../services/template-files.ts';
import { renderFile, renderPublished, sampleData, unifiedDiff } from '../../services/template-gate.ts';
import { textFromHtml } from '../../../daemon/render/liquid.ts';

export interface DiffedFile {
  path: string;
  slug: string;
  /** false when nothing is published yet for the slug and locale (everything is new). */
  published: boolean;
  changed: boolean;
  diff: { subject: string; html: string; text: string };
}

export default class TemplatesDiff extends SvcCommand<typeof TemplatesDiff> {
  static override operations = [
    'getTemplates',
    'getTemplatesById',
    'getTemplatesByIdVersionsByVersionId',
    'postTemplatesByIdVersionsByVersionIdPreview',
    'postTemplatesRenderReactEmail',
  ];
  static override summary =
    'Show what pushing these files would change: rendered subject, HTML (as text) and text, against the published version.';
  static override description =
    'Each file and the published version of its slug and locale are rendered with the same sample data (front-matter ' +
    '"data:" as one-line JSON, then --data) and compared as unified diffs: the subject, the HTML read as text, and the ' +
    'text part. Nothing is changed on the daemon. Exit code 0 whether or not there are changes; --exit-code makes ' +
    'changes exit 1 (like git diff --exit-code).';
  static override examples = [
    '<%= config.bin %> templates diff templates/welcome.html',
    '<%= config.bin %> templates diff templates/ --data @sample.json --json',
  ];
  static override strict = false;
  static override args = { file: Args.string({ description: 'template files or folders', required: true }) };
  static override flags = {
    data: Flags.string({ description: 'sample data, JSON or @file.json (wins over front-matter "data:")' }),
    'exit-code': Flags.boolean({ description: 'exit 1 when any file differs from its published version' }),
  };

  async run(): Promise<DiffedFile[]> {
    const extra = await parseData(this.flags.data);
    const paths = await expandTemplatePaths(this.positionals);
    const files = [];
    for (const path of paths) files.push({ path, file: await readTemplateFile(path) });
    const results: DiffedFile[] = [];
    for (const { path, file } of files) {
      const data = sampleData(file, extra);
      const local = await renderFile(this.client, file, data);
      const remote = await renderPublished(this.client, file, data);
      const label = (part: string): [string, string] => [`${file.slug} (published) ${part}`, `${path} ${part}`];
      const diff = {
        subject: unifiedDiff(remote?.subject ?? '', local.subject, label('subject')),
        html: unifiedDiff(remote ? htmlAsText(remote.html) : '', htmlAsText(local.html), label('html')),
        text: unifiedDiff(remote?.text ?? '', local.text, label('text')),
      };
      const changed = Boolean(diff.subject || diff.html || diff.text);
      results.push({ path, slug: file.slug, published: remote !== null, changed, diff });
      if (!changed) this.log(chalk.dim(`${path}: no change against the published ${file.slug}.`));
      else {
        if (!remote) this.log(chalk.yellow(`${path}: ${file.slug} has nothing published yet; all of it is new.`));
        for (const part of [diff.subject, diff.html, diff.text]) if (part) this.log(colourDiff(part));
      }
    }
    if (this.flags['exit-code'] && results.some((result) => result.changed)) process.exitCode = 1;
    return results;
  }
}

/** HTML compared as people read it: the same conversion the daemon uses for a derived text part. */
function htmlAsText(html: string): string {
  return html ? textFromHtml(html) : '';
}

function colourDiff(diff: string): string {
  return diff
    .split('\n')
    .map((line) =>
      line.startsWith('+')
        ? chalk.green(line)
        : line.startsWith('-')
          ? chalk.red(line)
          : line.startsWith('@@')
            ? chalk.cyan(line)
            : line,
    )
    .join('\n');
}
