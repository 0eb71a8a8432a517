import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { getDomain } from '../../../services/inbound-routing.ts';
import { describeInboundDomain } from '../../../services/inbound-domain-view.ts';
import type { InboundDomain } from '../../../../shared/schemas/inbound.ts';

export default class InboundDomainsShow extends SvcCommand<typeof InboundDomainsShow> {
  static override operations = ['getInboundDomainsById'];
  static override summary = 'Show an inbound domain and its last MX check.';
  static override examples = ['<%= config.bin %> inbound domains show 6e1f…'];
  static override args = { id: Args.string({ description: 'inbound domain id', required: true }) };

  async run(): Promise<InboundDomain> {
    const domain = await getDomain(this.client, this.args.id);
    this.log(describeInboundDomain(domain));
    return domain;
  }
}
