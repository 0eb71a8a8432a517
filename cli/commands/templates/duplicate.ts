import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { requireTemplate } from '../../services/template-files.ts';
import { templateAdmin } from '../../services/template-admin.ts';
import type { TemplateDetail } from '../../../shared/schemas/templates.ts';

export default class TemplatesDuplicate extends SvcCommand<typeof TemplatesDuplicate> {
  static override operations = ['getTemplates', 'getTemplatesById', 'postTemplatesByIdDuplicate'];
  static override summary = 'Copy a template (its newest versions, unpublished) under a new slug.';
  static override examples = ['<%= config.bin %> templates duplicate welcome'];
  static override args = { template: Args.string({ description: 'slug or id', required: true }) };

  async run(): Promise<TemplateDetail> {
    const template = await requireTemplate(this.client, this.args.template);
    const copy = await templateAdmin.duplicate(this.client, template.id);
    this.log(`Copied ${template.slug} to ${copy.slug} (${copy.id}).`);
    return copy;
  }
}
