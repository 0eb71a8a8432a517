import { Args, Flags } from '@oclif/core';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { existsSync } from 'node:fs';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { parseData } from '../../services/send.ts';
import { readTemplateFile } from '../../services/template-files.ts';
import { renderFile, sampleData, type Rendered } from '../../services/template-gate.ts';

export interface PreviewResult extends Rendered {
  /** The HTML file written by --open. */
  htmlFile?: string;
  opened?: boolean;
}

export default class TemplatesPreview extends SvcCommand<typeof TemplatesPreview> {
  static override operations = ['postTemplatesRenderReactEmail'];
  static override summary =
    'Render a template file with sample data: the subject and text in the terminal; --open shows the HTML in a browser.';
  static override description =
    '--open writes the rendered HTML to a temporary file and opens it with xdg-open (or open on macOS) when one ' +
    'is installed; otherwise it prints the path.';
  static override examples = [
    '<%= config.bin %> templates preview templates/welcome.html',
    '<%= config.bin %> templates preview templates/welcome.html --data \'{"name":"Ada"}\' --open',
  ];
  static override args = { file: Args.string({ description: 'template file (.html, .liquid, .tsx)', required: true }) };
  static override flags = {
    data: Flags.string({ description: 'sample data, JSON or @file.json (wins over front-matter "data:")' }),
    open: Flags.boolean({ description: 'write the HTML to a temporary file and open it' }),
  };

  async run(): Promise<PreviewResult> {
    const file = await readTemplateFile(this.args.file);
    const rendered = await renderFile(this.client, file, sampleData(file, await parseData(this.flags.data)));
    const result: PreviewResult = { ...rendered };
    this.log(`${chalk.dim('Subject:')} ${rendered.subject}\n\n${rendered.text}`);
    if (this.flags.open) {
      const path = join(mkdtempSync(join(tmpdir(), 'svc-preview-')), `${file.slug}.html`);
      writeFileSync(path, rendered.html, { mode: 0o600 });
      result.htmlFile = path;
      const opener = findOpener();
      result.opened = opener !== null;
      if (opener) spawn(opener, [path], { detached: true, stdio: 'ignore' }).unref();
      this.log(
        opener
          ? chalk.dim(`Opened ${path} with ${opener}.`)
          : `HTML written to ${path} (no xdg-open or open on PATH: open it in a browser).`,
      );
    }
    return result;
  }
}

function findOpener(): string | null {
  const name = process.platform === 'darwin' ? 'open' : 'xdg-open';
  const found = (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, name)));
  return found ? name : null;
}
