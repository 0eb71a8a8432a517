import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { requireTemplateTag, templateTags } from '../../../services/template-admin.ts';

export default class TemplateTagsDelete extends SvcCommand<typeof TemplateTagsDelete> {
  static override operations = ['getTemplatesTags', 'deleteTemplatesTagsByTagId'];
  static override summary = 'Delete a template tag (templates lose it).';
  static override examples = ['<%= config.bin %> templates tags delete onboarding'];
  static override args = { tag: Args.string({ description: 'tag name or id', required: true }) };

  async run(): Promise<{ id: string; name: string; deleted: true }> {
    const tag = await requireTemplateTag(this.client, this.args.tag);
    await templateTags.remove(this.client, tag.id);
    this.log(`Deleted template tag ${tag.name}.`);
    return { id: tag.id, name: tag.name, deleted: true };
  }
}
