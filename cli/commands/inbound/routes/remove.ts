import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { removeRoute } from '../../../services/inbound-routing.ts';

export default class InboundRoutesRemove extends SvcCommand<typeof InboundRoutesRemove> {
  static override operations = ['deleteInboundRoutesById'];
  static override summary = 'Remove an inbound route; its stored messages stay.';
  static override examples = ['<%= config.bin %> inbound routes remove 2c8d…'];
  static override args = { id: Args.string({ description: 'route id', required: true }) };

  async run(): Promise<{ id: string; removed: true }> {
    await removeRoute(this.client, this.args.id);
    this.log(`Removed inbound route ${this.args.id}.`);
    return { id: this.args.id, removed: true };
  }
}
