import { Flags } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { createRoute } from '../../../services/inbound-routing.ts';
import { describeRoute, routeFields, routeFlags } from '../../../services/inbound-route-flags.ts';
import { INBOUND_ROUTE_ACTIONS, type InboundRoute } from '../../../../shared/schemas/inbound.ts';

export default class InboundRoutesAdd extends SvcCommand<typeof InboundRoutesAdd> {
  static override operations = ['postInboundRoutes'];
  static override summary =
    'Add an inbound route: mail to an address goes to a webhook, an address, storage, or is refused.';
  static override examples = [
    '<%= config.bin %> inbound routes add --match support@reply.acme.com --action store',
    '<%= config.bin %> inbound routes add --match "reply+*@reply.acme.com" --action forward --forward-to team@acme.com',
    '<%= config.bin %> inbound routes add --match "*@reply.acme.com" --action refuse --refuse-message "No such mailbox" --json',
  ];
  static override flags = {
    ...routeFlags,
    match: Flags.string({ description: routeFlags.match.description, required: true }),
    action: Flags.option({
      options: INBOUND_ROUTE_ACTIONS,
      description: routeFlags.action.description,
      required: true,
    })(),
    disabled: Flags.boolean({ description: 'add it switched off' }),
  };

  async run(): Promise<InboundRoute> {
    const { match, action, ...rest } = this.flags;
    const route = await createRoute(this.client, {
      ...routeFields(rest),
      address: match,
      action,
      ...(this.flags.disabled ? { enabled: false } : {}),
    });
    this.log(describeRoute(route));
    return route;
  }
}
