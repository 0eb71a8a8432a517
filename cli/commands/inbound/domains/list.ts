import chalk from 'chalk';
import { SvcCommand } from '../../../base-command.ts';
import { shortDate, table } from '../../../format.ts';
import { listDomains } from '../../../services/inbound-routing.ts';
import type { InboundDomainsPage } from '../../../../shared/schemas/inbound.ts';

export default class InboundDomainsList extends SvcCommand<typeof InboundDomainsList> {
  static override operations = ['getInboundDomains'];
  static override summary = 'List the domains this tenant receives mail on, and their MX state.';
  static override examples = [
    '<%= config.bin %> inbound domains list',
    '<%= config.bin %> inbound domains list --json',
  ];

  async run(): Promise<InboundDomainsPage> {
    const page = await listDomains(this.client);
    this.log(
      table(
        page.data,
        [
          { header: 'ID', value: (d) => d.id },
          { header: 'NAME', value: (d) => d.name },
          {
            header: 'STATUS',
            value: (d) => (d.status === 'verified' ? chalk.green(d.status) : chalk.yellow(d.status)),
          },
          { header: 'EXPECTED MX', value: (d) => d.expectedMx },
          { header: 'CHECKED', value: (d) => shortDate(d.checkedAt) },
        ],
        'No inbound domains: add one with `svc inbound domains add reply.acme.com`.',
      ),
    );
    return page;
  }
}
