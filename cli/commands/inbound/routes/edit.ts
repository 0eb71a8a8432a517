import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { CliFailure, EXIT } from '../../../errors.ts';
import { updateRoute } from '../../../services/inbound-routing.ts';
import { describeRoute, routeFields, routeFlags } from '../../../services/inbound-route-flags.ts';
import type { InboundRoute } from '../../../../shared/schemas/inbound.ts';

export default class InboundRoutesEdit extends SvcCommand<typeof InboundRoutesEdit> {
  static override operations = ['patchInboundRoutesById'];
  static override summary = 'Change an inbound route: only the flags given change.';
  static override examples = [
    '<%= config.bin %> inbound routes edit 2c8d… --position 0',
    '<%= config.bin %> inbound routes edit 2c8d… --disable --json',
  ];
  static override args = { id: Args.string({ description: 'route id', required: true }) };
  static override flags = {
    ...routeFlags,
    enable: Flags.boolean({ description: 'switch the route on', exclusive: ['disable'] }),
    disable: Flags.boolean({ description: 'switch the route off (mail to it is then refused)' }),
  };

  async run(): Promise<InboundRoute> {
    const { enable, disable, ...rest } = this.flags;
    const changes = { ...routeFields(rest), ...(enable ? { enabled: true } : disable ? { enabled: false } : {}) };
    if (Object.keys(changes).length === 0)
      throw new CliFailure(
        'Nothing to change: give at least one flag (`svc inbound routes edit --help`).',
        EXIT.usage,
        'NOTHING_TO_CHANGE',
      );
    const route = await updateRoute(this.client, this.args.id, changes);
    this.log(describeRoute(route));
    return route;
  }
}
