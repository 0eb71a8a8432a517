import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { verifyDomain } from '../../../services/inbound-routing.ts';
import { describeInboundDomain } from '../../../services/inbound-domain-view.ts';
import type { InboundDomain } from '../../../../shared/schemas/inbound.ts';

export default class InboundDomainsVerify extends SvcCommand<typeof InboundDomainsVerify> {
  static override operations = ['postInboundDomainsByIdVerify'];
  static override summary = 'Check the MX records of an inbound domain now.';
  static override examples = ['<%= config.bin %> inbound domains verify 6e1f…'];
  static override args = { id: Args.string({ description: 'inbound domain id', required: true }) };

  async run(): Promise<InboundDomain> {
    const domain = await verifyDomain(this.client, this.args.id);
    this.log(describeInboundDomain(domain));
    return domain;
  }
}
