import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { requireTemplate } from '../../services/template-files.ts';
import { requireTemplateTag, templateTags } from '../../services/template-admin.ts';
import type { TemplateTagView } from '../../../shared/schemas/templates.ts';

export default class TemplatesTag extends SvcCommand<typeof TemplatesTag> {
  static override operations = [
    'getTemplates',
    'getTemplatesById',
    'getTemplatesTags',
    'getTemplatesByIdTags',
    'postTemplatesByIdTagsByTagId',
    'deleteTemplatesByIdTagsByTagId',
  ];
  static override summary = "Show a template's tags, add some, or take them off with --remove.";
  static override examples = [
    '<%= config.bin %> templates tag welcome',
    '<%= config.bin %> templates tag welcome onboarding transactional',
    '<%= config.bin %> templates tag welcome onboarding --remove',
  ];
  static override strict = false;
  static override args = { template: Args.string({ description: 'slug or id', required: true }) };
  static override flags = { remove: Flags.boolean({ description: 'take the named tags off' }) };

  async run(): Promise<TemplateTagView[]> {
    const template = await requireTemplate(this.client, this.args.template);
    for (const name of this.positionals.slice(1)) {
      const tag = await requireTemplateTag(this.client, name);
      if (this.flags.remove) await templateTags.detach(this.client, template.id, tag.id);
      else await templateTags.attach(this.client, template.id, tag.id);
    }
    const tags = await templateTags.ofTemplate(this.client, template.id);
    this.log(`${template.slug}: ${tags.map((t) => t.name).join(', ') || 'no tags'}`);
    return tags;
  }
}
