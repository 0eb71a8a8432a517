import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { templateTags } from '../../../services/template-admin.ts';
import type { TemplateTagView } from '../../../../shared/schemas/templates.ts';

export default class TemplateTagsCreate extends SvcCommand<typeof TemplateTagsCreate> {
  static override operations = ['postTemplatesTags'];
  static override summary = 'Create a template tag.';
  static override examples = ['<%= config.bin %> templates tags create onboarding'];
  static override args = {
    name: Args.string({ description: 'tag name (lower-case letters, digits, _ and -)', required: true }),
  };

  async run(): Promise<TemplateTagView> {
    const tag = await templateTags.create(this.client, this.args.name);
    this.log(`Created template tag ${tag.name}.`);
    return tag;
  }
}
