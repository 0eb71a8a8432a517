import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { latestVersion, requireTemplate } from '../../services/template-files.ts';

export interface PublishResult {
  templateId: string;
  slug: string;
  versionId: string;
  version: number;
  locale: string;
  alreadyPublished: boolean;
}

export default class TemplatesPublish extends SvcCommand<typeof TemplatesPublish> {
  static override operations = ['getTemplates', 'getTemplatesById', 'postTemplatesByIdVersionsByVersionIdPublish'];
  static override summary = 'Publish a version of a template (default: the newest of its locale).';
  static override examples = [
    '<%= config.bin %> templates publish welcome',
    '<%= config.bin %> templates publish welcome --version 3',
    '<%= config.bin %> templates publish welcome --locale fr --json',
  ];
  static override args = { template: Args.string({ description: 'slug or id', required: true }) };
  static override flags = {
    version: Flags.integer({ min: 1, description: 'version number (see `svc templates show`)' }),
    locale: Flags.string({ description: 'locale whose newest version to publish' }),
  };

  async run(): Promise<PublishResult> {
    const template = await requireTemplate(this.client, this.args.template);
    const version = this.flags.version
      ? template.versions.find((candidate) => candidate.version === this.flags.version)
      : latestVersion(template, this.flags.locale);
    if (!version)
      throw new CliFailure(
        `Template ${template.slug} has no such version: see \`svc templates show ${template.slug}\`.`,
        EXIT.refused,
        'NOT_FOUND',
      );
    if (!version.published) await this.client.publishTemplateVersion(template.id, version.id);
    this.log(
      `${version.published ? 'Already published' : 'Published'}: ${template.slug} version ${version.version} (${version.locale}).`,
    );
    return {
      templateId: template.id,
      slug: template.slug,
      versionId: version.id,
      version: version.version,
      locale: version.locale,
      alreadyPublished: version.published,
    };
  }
}
