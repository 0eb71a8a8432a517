import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { findDomain } from '../../services/domain-report.ts';
import { removeDomain } from '../../services/tenant-resources.ts';

export default class DomainsRemove extends SvcCommand<typeof DomainsRemove> {
  static override operations = ['getDomains', 'deleteDomainsById'];
  static override summary = 'Remove a sending domain (mail from it is refused afterwards).';
  static override examples = ['<%= config.bin %> domains remove mail.acme.com'];
  static override args = { domain: Args.string({ description: 'domain name or id', required: true }) };

  async run(): Promise<{ id: string; name: string; removed: true }> {
    const domain = await findDomain(this.client, this.args.domain);
    await removeDomain(this.client, domain.id);
    this.log(`Removed ${domain.name}.`);
    return { id: domain.id, name: domain.name, removed: true };
  }
}
