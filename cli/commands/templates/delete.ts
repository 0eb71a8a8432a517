import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { requireTemplate } from '../../services/template-files.ts';
import { pickVersion, templateAdmin } from '../../services/template-admin.ts';

export default class TemplatesDelete extends SvcCommand<typeof TemplatesDelete> {
  static override operations = [
    'getTemplates',
    'getTemplatesById',
    'deleteTemplatesById',
    'deleteTemplatesByIdVersionsByVersionId',
  ];
  static override summary = 'Delete a template with all its versions (--yes), or one unpublished version (--version).';
  static override examples = [
    '<%= config.bin %> templates delete old-promo --yes',
    '<%= config.bin %> templates delete welcome --version 4',
  ];
  static override args = { template: Args.string({ description: 'slug or id', required: true }) };
  static override flags = {
    version: Flags.integer({ min: 1, description: 'delete only this version' }),
    yes: Flags.boolean({ description: 'confirm deleting the whole template' }),
  };

  async run(): Promise<{ templateId: string; versionId: string | null; deleted: true }> {
    const template = await requireTemplate(this.client, this.args.template);
    if (this.flags.version) {
      const version = pickVersion(template, this.flags.version);
      await templateAdmin.removeVersion(this.client, template.id, version.id);
      this.log(`Deleted version ${version.version} of ${template.slug}.`);
      return { templateId: template.id, versionId: version.id, deleted: true };
    }
    if (!this.flags.yes)
      throw new CliFailure(
        `Deleting ${template.slug} and its ${template.versions.length} version(s) cannot be undone: run again with --yes.`,
        EXIT.usage,
        'CONFIRMATION_REQUIRED',
      );
    await templateAdmin.remove(this.client, template.id);
    this.log(`Deleted template ${template.slug}.`);
    return { templateId: template.id, versionId: null, deleted: true };
  }
}
