import { Args, Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { EXIT } from '../../errors.ts';
import { parseData } from '../../services/send.ts';
import { expandTemplatePaths, readTemplateFile } from '../../services/template-files.ts';
import { lintTemplate, readDomains, sampleData, type Finding } from '../../services/template-gate.ts';

export interface CheckedFile {
  path: string;
  slug: string;
  ok: boolean;
  findings: Finding[];
}

export interface CheckResult {
  ok: boolean;
  errors: number;
  warnings: number;
  files: CheckedFile[];
}

export default class TemplatesCheck extends SvcCommand<typeof TemplatesCheck> {
  static override operations = [
    'getDomains',
    'getTemplates',
    'getTemplatesById',
    'postTemplatesByIdVersionsByVersionIdPreview',
    'postTemplatesRenderReactEmail',
  ];
  static override summary = 'Lint template files before they are pushed; exits 1 when any has an error.';
  static override description =
    'Errors: Liquid that does not parse (LIQUID_INVALID), a variable without sample data (VARIABLE_WITHOUT_SAMPLE; ' +
    'sample data comes from front-matter "data:" as one-line JSON, and --data), no text part and none derivable ' +
    '(TEXT_PART_MISSING), HTML over 102 KB, which Gmail clips (HTML_TOO_LARGE), a front-matter "from:" whose domain ' +
    'is not a verified, DKIM-ready domain of the tenant (FROM_DOMAIN_UNKNOWN, FROM_DOMAIN_NOT_VERIFIED), a ' +
    'broadcast template ("broadcast: true") without an unsubscribe link (UNSUBSCRIBE_MISSING). Warnings: images ' +
    'without alt (IMAGE_WITHOUT_ALT), links or images that are not https (LINK_NOT_HTTPS); --strict fails on them ' +
    'too. Exit codes: 0 clean, 1 errors found, 2 bad file or flags.';
  static override examples = [
    '<%= config.bin %> templates check templates/',
    '<%= config.bin %> templates check templates/*.html --data @sample.json --json',
  ];
  static override strict = false;
  static override args = { file: Args.string({ description: 'template files or folders', required: true }) };
  static override flags = {
    data: Flags.string({ description: 'sample data, JSON or @file.json (wins over front-matter "data:")' }),
    strict: Flags.boolean({ description: 'warnings fail the check too' }),
  };

  async run(): Promise<CheckResult> {
    const extra = await parseData(this.flags.data);
    const paths = await expandTemplatePaths(this.positionals);
    const files = [];
    for (const path of paths) files.push({ path, file: await readTemplateFile(path) });
    const needsDomains = files.some(({ file }) => file.fields.from);
    const domains = needsDomains ? await readDomains(this.client) : [];
    const checked: CheckedFile[] = [];
    for (const { path, file } of files) {
      const findings = await lintTemplate(this.client, { file, data: sampleData(file, extra), domains });
      const failing = findings.filter((finding) => finding.severity === 'error' || this.flags.strict);
      checked.push({ path, slug: file.slug, ok: failing.length === 0, findings });
      this.log(`${failing.length === 0 ? chalk.green('ok  ') : chalk.red('FAIL')}  ${path}`);
      for (const finding of findings) {
        const mark = finding.severity === 'error' ? chalk.red('error  ') : chalk.yellow('warning');
        this.log(`      ${mark} ${finding.code}: ${finding.message}`);
      }
    }
    const all = checked.flatMap((file) => file.findings);
    const result: CheckResult = {
      ok: checked.every((file) => file.ok),
      errors: all.filter((finding) => finding.severity === 'error').length,
      warnings: all.filter((finding) => finding.severity === 'warning').length,
      files: checked,
    };
    // A failed check still answers with its findings (--json), then exits 1.
    if (!result.ok) {
      process.exitCode = EXIT.refused;
      this.log(
        chalk.red(
          `${result.errors} error${result.errors === 1 ? '' : 's'}, ${result.warnings} warning${result.warnings === 1 ? '' : 's'} in ${checked.filter((file) => !file.ok).length} of ${checked.length} template files.`,
        ),
      );
      return result;
    }
    this.log(
      chalk.dim(
        `${checked.length} template file${checked.length === 1 ? '' : 's'} checked: ${result.warnings} warning${result.warnings === 1 ? '' : 's'}.`,
      ),
    );
    return result;
  }
}
