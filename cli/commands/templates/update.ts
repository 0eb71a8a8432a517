import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { describeRecord } from '../../records.ts';
import { requireTemplate } from '../../services/template-files.ts';
import { templateAdmin } from '../../services/template-admin.ts';
import type { TemplateDetail, UpdateTemplateBody } from '../../../shared/schemas/templates.ts';

export default class TemplatesUpdate extends SvcCommand<typeof TemplatesUpdate> {
  static override operations = ['getTemplates', 'getTemplatesById', 'patchTemplatesById'];
  static override summary = 'Rename a template, change its slug or project (its versions are kept).';
  static override examples = [
    '<%= config.bin %> templates update welcome --name "Welcome (2026)"',
    '<%= config.bin %> templates update welcome --slug welcome-v2',
    '<%= config.bin %> templates update welcome --from "Acme <hello@acme.test>"',
  ];
  static override args = { template: Args.string({ description: 'slug or id', required: true }) };
  static override flags = {
    name: Flags.string({ description: 'new display name' }),
    slug: Flags.string({ description: 'new slug (sends by the old slug stop working)' }),
    project: Flags.string({ description: 'project id' }),
    from: Flags.string({ description: 'the template\'s sender, used when a send names none ("" clears it)' }),
  };

  async run(): Promise<TemplateDetail> {
    const changes: UpdateTemplateBody = {};
    if (this.flags.name) changes.name = this.flags.name;
    if (this.flags.slug) changes.slug = this.flags.slug;
    if (this.flags.project) changes.projectId = this.flags.project;
    if (this.flags.from !== undefined) changes.from = this.flags.from === '' ? null : this.flags.from;
    if (Object.keys(changes).length === 0)
      throw new CliFailure('Pass --name, --slug, --project or --from.', EXIT.usage, 'MISSING_FLAG');
    const template = await requireTemplate(this.client, this.args.template);
    const updated = await templateAdmin.update(this.client, template.id, changes);
    this.log(describeRecord(updated, ['id', 'slug', 'name', 'from', 'projectId', 'status', 'updatedAt']));
    return updated;
  }
}
