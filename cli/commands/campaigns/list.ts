import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { colourStatus, pageLine, shortDate, table } from '../../format.ts';
import { CAMPAIGN_STATUSES } from '../../../shared/constants.ts';
import type { CampaignPage } from '../../client.ts';

export default class CampaignsList extends SvcCommand<typeof CampaignsList> {
  static override operations = ['getCampaigns'];
  static override summary = 'List campaigns, newest first, with their send progress.';
  static override examples = [
    '<%= config.bin %> campaigns list',
    '<%= config.bin %> campaigns list --status SENDING --json',
  ];
  static override flags = {
    status: Flags.option({ options: CAMPAIGN_STATUSES, description: 'only this status' })(),
    page: Flags.integer({ min: 1, description: 'page number' }),
    limit: Flags.integer({ min: 1, max: 100, description: 'campaigns per page (default 20)' }),
  };

  async run(): Promise<CampaignPage> {
    const { status, page, limit } = this.flags;
    const list = await this.client.listCampaigns({ status, page, limit });
    this.log(
      table(
        list.data,
        [
          { header: 'ID', value: (c) => c.id },
          { header: 'NAME', value: (c) => c.name.slice(0, 30) },
          { header: 'STATUS', value: (c) => colourStatus(c.status) },
          { header: 'ACCEPTED', value: (c) => String(c.accepted) },
          { header: 'REJECTED', value: (c) => String(c.rejected) },
          { header: 'REMAINING', value: (c) => (c.remaining === null ? '—' : String(c.remaining)) },
          { header: 'SEND AT', value: (c) => shortDate(c.sendAt) },
          { header: 'CREATED', value: (c) => shortDate(c.createdAt) },
        ],
        'No campaigns.',
      ),
    );
    this.log(pageLine(list.meta));
    return list;
  }
}
