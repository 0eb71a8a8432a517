import { Args, Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { previewTlsReport, yesterdayUtc } from '../../services/tls-reports.ts';
import type { TlsReportPreviewBody } from '../../../shared/schemas/tls-reports.ts';

export default class TlsReportsShow extends SvcCommand<typeof TlsReportsShow> {
  static override operations = ['getPlatformTlsReportsByDomainByDay'];
  static override summary = "Preview a day's TLS report for a domain: what it says, where it goes, what was sent.";
  static override description =
    'The RFC 8460 aggregate report this platform sends to a recipient domain that publishes _smtp._tls, built from ' +
    "the day's counted TLS sessions (UTC), as the daily job sends it once the day is over. Platform admins only. " +
    'The report’s organization-name and contact-info are the platform settings tlsReportOrganization and ' +
    'tlsReportContact (svc platform settings set).';
  static override examples = [
    '<%= config.bin %> tls-reports show gmail.com',
    '<%= config.bin %> tls-reports show example.com --day 2026-11-27 --json',
  ];
  static override showHeader = false;
  static override args = { domain: Args.string({ description: 'the recipient (policy) domain', required: true }) };
  static override flags = {
    day: Flags.string({ description: 'the UTC day, YYYY-MM-DD (default: yesterday)' }),
  };

  async run(): Promise<TlsReportPreviewBody> {
    const day = this.flags.day ?? yesterdayUtc();
    const preview = await previewTlsReport(this.client, this.args.domain, day);
    const { report } = preview;
    this.log(`${chalk.bold(preview.domain)} ${preview.day}  ${chalk.dim(report['report-id'])}`);
    this.log(`from ${report['organization-name']} (${report['contact-info']})`);
    for (const { policy, summary, ...rest } of report.policies) {
      this.log(
        `  ${policy['policy-type']}: ${summary['total-successful-session-count']} successful, ${summary['total-failure-session-count']} failed session(s)`,
      );
      for (const detail of rest['failure-details'] ?? [])
        this.log(
          chalk.yellow(
            `    ${detail['result-type']} ×${detail['failed-session-count']}${detail['receiving-mx-hostname'] ? ` at ${detail['receiving-mx-hostname']}` : ''}`,
          ),
        );
    }
    const rua = [...preview.rua.https, ...preview.rua.mailto.map((address) => `mailto:${address}`)];
    this.log(
      !preview.rua.answered
        ? chalk.red(`rua: the _smtp._tls look-up did not answer`)
        : rua.length > 0
          ? `rua: ${rua.join(', ')}`
          : chalk.dim(`rua: none (${preview.domain} publishes no _smtp._tls record; nothing is sent)`),
    );
    if (!preview.sent) this.log(chalk.dim('not sent yet (the daily job sends it once the day is over)'));
    else
      for (const outcome of preview.sent.outcomes)
        this.log(`${outcome.ok ? chalk.green('✓') : chalk.red('✗')} ${outcome.uri}  ${chalk.dim(outcome.detail)}`);
    return preview;
  }
}
