import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { findDomain, renderDnsRecords } from '../../services/domain-report.ts';
import type { DomainBody } from '../../../shared/schemas/domains.ts';

export default class DomainsDns extends SvcCommand<typeof DomainsDns> {
  static override operations = ['getDomains', 'getDomainsByIdDns'];
  static override summary = 'Print the DNS records of a domain and the state of each.';
  static override examples = ['<%= config.bin %> domains dns mail.acme.com'];
  static override args = { domain: Args.string({ description: 'domain name or id', required: true }) };

  async run(): Promise<DomainBody> {
    const found = await findDomain(this.client, this.args.domain);
    const domain = await this.client.domainDns(found.id);
    this.log(renderDnsRecords(domain));
    return domain;
  }
}
