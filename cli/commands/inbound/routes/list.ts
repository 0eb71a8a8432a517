import chalk from 'chalk';
import { SvcCommand } from '../../../base-command.ts';
import { table } from '../../../format.ts';
import { listRoutes } from '../../../services/inbound-routing.ts';
import { routeTarget } from '../../../services/inbound-route-flags.ts';
import type { InboundRoutesPage } from '../../../../shared/schemas/inbound.ts';

export default class InboundRoutesList extends SvcCommand<typeof InboundRoutesList> {
  static override operations = ['getInboundRoutes'];
  static override summary = 'List inbound routes in the order they are tried (the first match wins).';
  static override examples = ['<%= config.bin %> inbound routes list', '<%= config.bin %> inbound routes list --json'];

  async run(): Promise<InboundRoutesPage> {
    const page = await listRoutes(this.client);
    this.log(
      table(
        page.data,
        [
          { header: 'POS', value: (r) => String(r.position) },
          { header: 'ID', value: (r) => r.id },
          { header: 'MATCH', value: (r) => r.address },
          { header: 'ACTION', value: (r) => routeTarget(r) },
          { header: 'ON', value: (r) => (r.enabled ? chalk.green('yes') : chalk.red('no')) },
          { header: 'NOTE', value: (r) => r.description ?? '' },
        ],
        'No inbound routes: add one with `svc inbound routes add --match support@reply.acme.com --action store`.',
      ),
    );
    return page;
  }
}
