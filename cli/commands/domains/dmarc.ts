import { Args, Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { pageLine, shortDate, table } from '../../format.ts';
import { findDomain } from '../../services/domain-report.ts';
import type { DmarcReportBody, DmarcSource } from '../../../shared/schemas/dmarc.ts';

type Row = DmarcSource & { report: DmarcReportBody };

const mechanism = (m: DmarcSource['dkim']) =>
  `${m.aligned ? chalk.green('aligned') : chalk.red('not aligned')} ${chalk.dim(`${m.result ?? '—'}${m.domain ? ` ${m.domain}` : ''}`)}`;

export default class DomainsDmarc extends SvcCommand<typeof DomainsDmarc> {
  static override operations = ['getDomains', 'getDomainsByIdDmarcReports'];
  static override summary =
    'DMARC aggregate reports received for a domain: which sources send as it and which fail DKIM/SPF alignment.';
  static override description =
    "Reports arrive when the domain's DMARC record names the service's rua address (see `svc domains dns`). One line per source of each report, newest report first.";
  static override examples = [
    '<%= config.bin %> domains dmarc acme.com',
    '<%= config.bin %> domains dmarc acme.com --json',
    '<%= config.bin %> domains dmarc acme.com --page 2',
  ];
  static override args = { domain: Args.string({ description: 'domain name or id', required: true }) };
  static override flags = {
    page: Flags.integer({ description: 'page of reports', min: 1, default: 1 }),
    limit: Flags.integer({ description: 'reports per page', min: 1, max: 100, default: 20 }),
  };

  async run() {
    const found = await findDomain(this.client, this.args.domain);
    const answer = await this.client.dmarcReports(found.id, { page: this.flags.page, limit: this.flags.limit });
    const rows: Row[] = answer.data.flatMap((report) => report.sources.map((source) => ({ ...source, report })));
    this.log(
      table(
        rows,
        [
          { header: 'REPORTER', value: (r) => r.report.orgName },
          {
            header: 'PERIOD',
            value: (r) => `${shortDate(r.report.dateBegin).slice(0, 10)} → ${shortDate(r.report.dateEnd).slice(0, 10)}`,
          },
          { header: 'SOURCE', value: (r) => r.sourceIp },
          { header: 'COUNT', value: (r) => String(r.count) },
          { header: 'DMARC', value: (r) => (r.dmarc === 'pass' ? chalk.green('pass') : chalk.red('FAIL')) },
          { header: 'DKIM', value: (r) => mechanism(r.dkim) },
          { header: 'SPF', value: (r) => mechanism(r.spf) },
          { header: 'DISPOSITION', value: (r) => r.disposition },
        ],
        `No DMARC reports for ${found.unicodeName} yet: receivers send them daily once the DMARC record names the service's rua address.`,
      ),
    );
    const failing = answer.data.reduce((sum, report) => sum + report.failing, 0);
    const messages = answer.data.reduce((sum, report) => sum + report.messages, 0);
    if (messages > 0)
      this.log(
        failing > 0
          ? chalk.red(`${failing} of ${messages} messages failed DMARC on this page.`)
          : chalk.green(`All ${messages} messages passed DMARC on this page.`),
      );
    if (answer.meta.total > 0) this.log(pageLine(answer.meta));
    return answer;
  }
}
