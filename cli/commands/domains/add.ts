import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { renderDnsRecords } from '../../services/domain-report.ts';
import type { DomainBody } from '../../../shared/schemas/domains.ts';

export default class DomainsAdd extends SvcCommand<typeof DomainsAdd> {
  static override operations = ['postDomains'];
  static override summary = 'Register a sending domain and print the DNS records to publish.';
  static override examples = [
    '<%= config.bin %> domains add mail.acme.com',
    '<%= config.bin %> domains add news.acme.com --json',
  ];
  static override args = { domain: Args.string({ description: 'domain name', required: true }) };

  async run(): Promise<DomainBody> {
    const domain = await this.client.addDomain(this.args.domain);
    this.log(renderDnsRecords(domain));
    this.log(`\nPublish these records, then run \`svc domains verify ${domain.name}\`.`);
    return domain;
  }
}
