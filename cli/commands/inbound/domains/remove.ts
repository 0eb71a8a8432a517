import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { removeDomain } from '../../../services/inbound-routing.ts';

export default class InboundDomainsRemove extends SvcCommand<typeof InboundDomainsRemove> {
  static override operations = ['deleteInboundDomainsById'];
  static override summary = 'Stop receiving on an inbound domain.';
  static override examples = ['<%= config.bin %> inbound domains remove 6e1f…'];
  static override args = { id: Args.string({ description: 'inbound domain id', required: true }) };

  async run(): Promise<{ id: string; removed: true }> {
    await removeDomain(this.client, this.args.id);
    this.log(`Removed inbound domain ${this.args.id}.`);
    return { id: this.args.id, removed: true };
  }
}
