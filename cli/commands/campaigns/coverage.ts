import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRows } from '../../records.ts';
import { campaigns } from '../../services/tenant-resources.ts';
import type { LocaleCoverage } from '../../../shared/schemas/campaigns.ts';

export default class CampaignsCoverage extends SvcCommand<typeof CampaignsCoverage> {
  static override operations = ['getCampaignsByIdLocaleCoverage'];
  static override summary = "The campaign's contacts per locale, and which published version each locale would get.";
  static override examples = ['<%= config.bin %> campaigns coverage 4e2a…'];
  static override args = { id: Args.string({ description: 'campaign id', required: true }) };

  async run(): Promise<LocaleCoverage[]> {
    const coverage = await campaigns.localeCoverage(this.client, this.args.id);
    this.log(describeRows(coverage, ['locale', 'contacts', 'hasPublishedVersion', 'fallbackLocale']));
    return coverage;
  }
}
