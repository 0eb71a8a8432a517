import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { colourStatus, keyValue, shortDate } from '../../format.ts';
import { watchCampaign } from '../../services/campaign-progress.ts';
import type { CampaignDetail } from '../../../shared/schemas/campaigns.ts';

export default class CampaignsShow extends SvcCommand<typeof CampaignsShow> {
  static override operations = ['getCampaignsById'];
  static override summary = 'Show a campaign; while it is SENDING, follow its progress to the end.';
  static override description =
    'In a terminal a SENDING campaign is followed with a live progress bar (q stops watching; the send goes on). ' +
    'Without a terminal, --watch prints one line per change until the send ends; --json prints the campaign as read last.';
  static override examples = [
    '<%= config.bin %> campaigns show 5e0a…',
    '<%= config.bin %> campaigns show 5e0a… --watch --json',
  ];
  static override args = { id: Args.string({ description: 'campaign id (see `svc campaigns list`)', required: true }) };
  static override flags = {
    watch: Flags.boolean({ description: 'follow a SENDING campaign until it ends, also without a terminal' }),
    once: Flags.boolean({ description: 'show it once, even in a terminal', exclusive: ['watch'] }),
  };

  async run(): Promise<CampaignDetail> {
    let campaign = await this.client.getCampaign(this.args.id);
    const live = this.interactive && !this.jsonEnabled() && !this.flags.once;
    if (campaign.status === 'SENDING' && (live || this.flags.watch)) {
      campaign = await watchCampaign(this.client, campaign.id, {
        live,
        log: this.jsonEnabled() ? undefined : (line) => this.log(line),
      });
    }
    this.log(describeCampaign(campaign));
    return campaign;
  }
}

export function describeCampaign(c: CampaignDetail): string {
  return keyValue([
    ['id', c.id],
    ['name', c.name],
    ['status', colourStatus(c.status)],
    ['from', c.from],
    ['audience', `${JSON.stringify(c.audience)} · ${c.audienceSize} opted-in contacts now`],
    [
      'progress',
      c.total === null
        ? null
        : `${c.accepted} accepted · ${c.rejected} rejected · ${c.remaining ?? 0} remaining of ${c.total}`,
    ],
    ['taken back', c.cancelledSends ? `${c.cancelledSends} queued sends (cancel)` : null],
    ['send at', c.sendAt ? shortDate(c.sendAt) : null],
    ['started', c.startedAt ? shortDate(c.startedAt) : null],
    ['sent', c.sentAt ? shortDate(c.sentAt) : null],
    ['cancelled', c.cancelledAt ? shortDate(c.cancelledAt) : null],
    ['last error', c.lastError],
  ]);
}
