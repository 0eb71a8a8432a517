import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { getRoute } from '../../../services/inbound-routing.ts';
import { describeRoute } from '../../../services/inbound-route-flags.ts';
import type { InboundRoute } from '../../../../shared/schemas/inbound.ts';

export default class InboundRoutesShow extends SvcCommand<typeof InboundRoutesShow> {
  static override operations = ['getInboundRoutesById'];
  static override summary = 'Show one inbound route.';
  static override examples = ['<%= config.bin %> inbound routes show 2c8d…'];
  static override args = { id: Args.string({ description: 'route id', required: true }) };

  async run(): Promise<InboundRoute> {
    const route = await getRoute(this.client, this.args.id);
    this.log(describeRoute(route));
    return route;
  }
}
