import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { EXIT } from '../../errors.ts';
import { findDomain, renderDnsRecords } from '../../services/domain-report.ts';
import type { VerifyDomainBody } from '../../../shared/schemas/domains.ts';

export default class DomainsVerify extends SvcCommand<typeof DomainsVerify> {
  static override operations = ['getDomains', 'postDomainsByIdVerify'];
  static override summary = 'Check the DNS records now and record the result; exits 1 unless the domain is verified.';
  static override examples = [
    '<%= config.bin %> domains verify mail.acme.com',
    '<%= config.bin %> domains verify mail.acme.com --json || echo "not yet"',
  ];
  static override args = { domain: Args.string({ description: 'domain name or id', required: true }) };

  async run(): Promise<VerifyDomainBody> {
    const found = await findDomain(this.client, this.args.domain);
    const domain = await this.client.verifyDomain(found.id);
    this.log(renderDnsRecords(domain));
    for (const problem of domain.problems) this.log(`  ${problem.message} ${problem.fix}`);
    if (domain.status !== 'verified') {
      this.log(`\nNot verified yet: run \`svc domains diagnose ${domain.name}\` for the exact records to publish.`);
      process.exitCode = EXIT.refused;
    }
    return domain;
  }
}
