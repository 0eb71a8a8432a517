import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { requireTemplate } from '../../services/template-files.ts';
import { templateAdmin } from '../../services/template-admin.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import type { TemplateVersionView } from '../../../shared/schemas/templates.ts';

export default class TemplatesUnpublish extends SvcCommand<typeof TemplatesUnpublish> {
  static override operations = ['getTemplates', 'getTemplatesById', 'postTemplatesByIdVersionsByVersionIdUnpublish'];
  static override summary = 'Unpublish the published version of a locale: sends of that locale fall back or get 422.';
  static override examples = [
    '<%= config.bin %> templates unpublish welcome',
    '<%= config.bin %> templates unpublish welcome --locale fr',
  ];
  static override args = { template: Args.string({ description: 'slug or id', required: true }) };
  static override flags = { locale: Flags.string({ description: "locale (default: the template's default locale)" }) };

  async run(): Promise<TemplateVersionView> {
    const template = await requireTemplate(this.client, this.args.template);
    const locale = this.flags.locale ?? template.defaultLocale;
    const version = template.versions.find((v) => v.published && v.locale === locale);
    if (!version)
      throw new CliFailure(`${template.slug} has no published ${locale} version.`, EXIT.refused, 'NOT_PUBLISHED');
    const answer = await templateAdmin.unpublish(this.client, template.id, version.id);
    this.log(`Unpublished version ${answer.version} (${answer.locale}) of ${template.slug}.`);
    return answer;
  }
}
