import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { watchCampaign } from '../../services/campaign-progress.ts';
import type { CampaignDetail } from '../../../shared/schemas/campaigns.ts';
import { describeCampaign } from './show.ts';

export default class CampaignsSend extends SvcCommand<typeof CampaignsSend> {
  static override operations = ['getCampaignsById', 'postCampaignsByIdSend'];
  static override summary = 'Start sending a DRAFT or SCHEDULED campaign now, and follow it.';
  static override description =
    'The daemon answers at once (SENDING) and a worker hands the audience to the send pipeline in chunks. In a terminal ' +
    'the progress is drawn live; without one, --watch prints a line per change; --detach returns right after the start.';
  static override examples = [
    '<%= config.bin %> campaigns send 5e0a… --from "Acme <news@acme.example>"',
    '<%= config.bin %> campaigns send 5e0a… --from news@acme.example --json --detach',
  ];
  static override args = { id: Args.string({ description: 'campaign id', required: true }) };
  static override flags = {
    from: Flags.string({ description: 'sender, on a verified domain when mail leaves', required: true }),
    watch: Flags.boolean({ description: 'follow the send to its end, also without a terminal' }),
    detach: Flags.boolean({ description: 'return once the send has started', exclusive: ['watch'] }),
  };

  async run(): Promise<CampaignDetail> {
    const started = await this.client.sendCampaign(this.args.id, this.flags.from);
    const live = this.interactive && !this.jsonEnabled() && !this.flags.detach;
    if (!live && !this.flags.watch) {
      const campaign = await this.client.getCampaign(started.id);
      this.log(describeCampaign(campaign));
      return campaign;
    }
    const campaign = await watchCampaign(this.client, started.id, {
      live,
      log: this.jsonEnabled() ? undefined : (line) => this.log(line),
    });
    this.log(describeCampaign(campaign));
    return campaign;
  }
}
