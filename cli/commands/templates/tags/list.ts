import { SvcCommand } from '../../../base-command.ts';
import { describeRows } from '../../../records.ts';
import { templateTags } from '../../../services/template-admin.ts';
import type { TemplateTagView } from '../../../../shared/schemas/templates.ts';

export default class TemplateTagsList extends SvcCommand<typeof TemplateTagsList> {
  static override operations = ['getTemplatesTags'];
  static override summary = "List the tenant's template tags.";
  static override examples = ['<%= config.bin %> templates tags list'];

  async run(): Promise<TemplateTagView[]> {
    const tags = await templateTags.list(this.client);
    this.log(describeRows(tags, ['id', 'name', 'createdAt'], 'No template tags.'));
    return tags;
  }
}
