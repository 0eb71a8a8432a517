import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRecord } from '../../records.ts';
import { requireTemplate } from '../../services/template-files.ts';
import { campaigns } from '../../services/tenant-resources.ts';
import { parseSchedule } from '../../services/send.ts';
import type { Campaign, CreateCampaignBody } from '../../../shared/schemas/campaigns.ts';

export default class CampaignsCreate extends SvcCommand<typeof CampaignsCreate> {
  static override operations = ['getTemplates', 'getTemplatesById', 'postCampaigns'];
  static override summary =
    'Create a campaign: a template to the opted-in contacts matching --tag, --locale, --project.';
  static override description =
    'Without --schedule the campaign is a DRAFT (send it with `svc campaigns send`); with it, SCHEDULED.';
  static override examples = [
    '<%= config.bin %> campaigns create "March news" --template newsletter --tag subscribers',
    '<%= config.bin %> campaigns create "Launch" --template launch --schedule 2026-12-01T09:00:00Z --from news@acme.com --json',
  ];
  static override args = { name: Args.string({ description: 'campaign name', required: true }) };
  static override flags = {
    template: Flags.string({ description: 'template slug or id', required: true }),
    tag: Flags.string({ description: 'only contacts with this tag' }),
    locale: Flags.string({ description: 'only contacts of this locale' }),
    project: Flags.string({ description: 'only contacts of this project' }),
    schedule: Flags.string({ description: 'send at: ISO 8601 time or a delay (+2h, +1d)', dependsOn: ['from'] }),
    from: Flags.string({ description: 'sender (required with --schedule)' }),
  };

  async run(): Promise<Campaign> {
    const f = this.flags;
    const template = await requireTemplate(this.client, f.template);
    const body: CreateCampaignBody = {
      name: this.args.name,
      templateId: template.id,
      audience: {
        ...(f.tag ? { tag: f.tag } : {}),
        ...(f.locale ? { locale: f.locale } : {}),
        ...(f.project ? { projectId: f.project } : {}),
      },
      ...(f.schedule ? { sendAt: parseSchedule(f.schedule) } : {}),
      ...(f.from ? { from: f.from } : {}),
    };
    const campaign = await campaigns.create(this.client, body);
    this.log(describeRecord(campaign, ['id', 'name', 'status', 'audience', 'sendAt', 'from']));
    return campaign;
  }
}
