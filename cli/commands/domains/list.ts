import { SvcCommand } from '../../base-command.ts';
import { shortDate, table } from '../../format.ts';
import { recordMark } from '../../services/domain-report.ts';
import type { DomainBody } from '../../../shared/schemas/domains.ts';

export default class DomainsList extends SvcCommand<typeof DomainsList> {
  static override operations = ['getDomains'];
  static override summary = "List the tenant's sending domains and their verification state.";
  static override examples = ['<%= config.bin %> domains list', '<%= config.bin %> domains list --json'];

  async run(): Promise<{ domains: DomainBody[] }> {
    const domains = await this.client.listDomains();
    this.log(
      table(
        domains,
        [
          { header: 'NAME', value: (d) => d.unicodeName },
          {
            header: 'STATUS',
            value: (d) =>
              `${recordMark(d.status === 'verified' ? 'verified' : d.status === 'failed' ? 'error' : 'pending')} ${d.status}`,
          },
          { header: 'RECORDS', value: (d) => d.records.map((r) => `${recordMark(r.status)}${r.record}`).join(' ') },
          { header: 'CHECKED', value: (d) => shortDate(d.lastCheckedAt) },
          { header: 'ID', value: (d) => d.id },
        ],
        'No domains yet: add one with `svc domains add <domain>`.',
      ),
    );
    return { domains };
  }
}
