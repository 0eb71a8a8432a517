import { Args } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { keyValue, shortDate, table } from '../../format.ts';
import { requireTemplate } from '../../services/template-files.ts';
import type { TemplateDetail } from '../../../shared/schemas/templates.ts';

export default class TemplatesShow extends SvcCommand<typeof TemplatesShow> {
  static override operations = ['getTemplates', 'getTemplatesById', 'getTemplatesByIdVersionsByVersionId'];
  static override summary = 'Show a template and its versions.';
  static override examples = [
    '<%= config.bin %> templates show welcome',
    '<%= config.bin %> templates show welcome --json',
  ];
  static override args = { template: Args.string({ description: 'slug or id', required: true }) };

  async run(): Promise<TemplateDetail> {
    const template = await requireTemplate(this.client, this.args.template);
    this.log(
      keyValue([
        ['id', template.id],
        ['slug', template.slug],
        ['name', template.name],
        ['mode', template.editorMode],
        ['status', template.status],
        ['locale', template.defaultLocale],
        ['tags', template.tags.map((tag) => tag.name).join(', ') || null],
      ]),
    );
    this.log('');
    this.log(
      table(
        [...template.versions].sort((a, b) => b.version - a.version),
        [
          { header: 'VERSION', value: (v) => String(v.version) },
          { header: 'LOCALE', value: (v) => v.locale },
          { header: 'PUBLISHED', value: (v) => (v.published ? chalk.green(`✓ ${shortDate(v.publishedAt)}`) : '') },
          { header: 'SUBJECT', value: (v) => v.subject.slice(0, 50) },
          { header: 'UPDATED', value: (v) => shortDate(v.updatedAt) },
          { header: 'ID', value: (v) => v.id },
        ],
      ),
    );
    return template;
  }
}
