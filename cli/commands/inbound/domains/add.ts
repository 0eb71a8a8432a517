import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { addDomain } from '../../../services/inbound-routing.ts';
import { describeInboundDomain } from '../../../services/inbound-domain-view.ts';
import type { InboundDomain } from '../../../../shared/schemas/inbound.ts';

export default class InboundDomainsAdd extends SvcCommand<typeof InboundDomainsAdd> {
  static override operations = ['postInboundDomains'];
  static override summary = 'Receive mail on a domain of yours: prints the MX record to publish.';
  static override examples = ['<%= config.bin %> inbound domains add reply.acme.com'];
  static override args = { name: Args.string({ description: 'the domain, e.g. reply.acme.com', required: true }) };

  async run(): Promise<InboundDomain> {
    const domain = await addDomain(this.client, { name: this.args.name });
    this.log(describeInboundDomain(domain));
    this.log(
      `\nPublish: ${domain.name}. MX 10 ${domain.expectedMx}. then run \`svc inbound domains verify ${domain.id}\`.`,
    );
    return domain;
  }
}
