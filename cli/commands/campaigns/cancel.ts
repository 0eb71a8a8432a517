import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import type { CampaignDetail } from '../../../shared/schemas/campaigns.ts';
import { describeCampaign } from './show.ts';

export default class CampaignsCancel extends SvcCommand<typeof CampaignsCancel> {
  static override operations = ['getCampaignsById', 'postCampaignsByIdCancel'];
  static override summary =
    'Cancel a campaign; a SENDING one stops and its queued sends not yet picked up are taken back.';
  static override examples = ['<%= config.bin %> campaigns cancel 5e0a…'];
  static override args = { id: Args.string({ description: 'campaign id', required: true }) };

  async run(): Promise<CampaignDetail> {
    await this.client.cancelCampaign(this.args.id);
    const campaign = await this.client.getCampaign(this.args.id);
    this.log(describeCampaign(campaign));
    return campaign;
  }
}
