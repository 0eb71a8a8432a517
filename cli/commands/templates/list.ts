import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pageLine, shortDate, table } from '../../format.ts';
import type { Page } from '../../api-types.ts';
import type { TemplateSummary } from '../../../shared/schemas/templates.ts';

export default class TemplatesList extends SvcCommand<typeof TemplatesList> {
  static override operations = ['getTemplates'];
  static override summary = 'List templates with their published locales.';
  static override examples = [
    '<%= config.bin %> templates list',
    '<%= config.bin %> templates list --search welcome --json',
  ];
  static override flags = {
    search: Flags.string({ description: 'part of the name or slug' }),
    page: Flags.integer({ min: 1, description: 'page number' }),
    limit: Flags.integer({ min: 1, max: 100, description: 'templates per page (max 100)' }),
  };

  async run(): Promise<Page<TemplateSummary>> {
    const page = await this.client.listTemplates({
      search: this.flags.search,
      page: this.flags.page,
      limit: this.flags.limit,
    });
    this.log(
      table(
        page.data,
        [
          { header: 'SLUG', value: (t) => t.slug },
          { header: 'NAME', value: (t) => t.name },
          { header: 'MODE', value: (t) => t.editorMode },
          { header: 'STATUS', value: (t) => t.status },
          { header: 'PUBLISHED', value: (t) => t.publishedLocales.join(',') || '—' },
          { header: 'VERSIONS', value: (t) => String(t.latestVersion) },
          { header: 'UPDATED', value: (t) => shortDate(t.updatedAt) },
        ],
        'No templates yet: push one with `svc templates push welcome.html`.',
      ),
    );
    this.log(pageLine(page.meta));
    return page;
  }
}
