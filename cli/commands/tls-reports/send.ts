import { Args, Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { EXIT } from '../../errors.ts';
import { resendTlsReport, yesterdayUtc } from '../../services/tls-reports.ts';
import type { TlsReportSentBody } from '../../../shared/schemas/tls-reports.ts';

export default class TlsReportsSend extends SvcCommand<typeof TlsReportsSend> {
  static override operations = ['postPlatformTlsReportsByDomainByDaySend'];
  static override summary = "Send a finished day's TLS report for a domain again, to every address it publishes.";
  static override description =
    'For a receiver that lost it or was down: the same report (same report-id) goes to every rua of ' +
    '_smtp._tls.<domain>, POSTed to https ones and mailed to mailto ones. Only a finished UTC day. Platform admins ' +
    'only. Exits 1 when an address refused it.';
  static override examples = [
    '<%= config.bin %> tls-reports send example.com',
    '<%= config.bin %> tls-reports send example.com --day 2026-11-27 --json',
  ];
  static override showHeader = false;
  static override args = { domain: Args.string({ description: 'the recipient (policy) domain', required: true }) };
  static override flags = {
    day: Flags.string({ description: 'the UTC day, YYYY-MM-DD (default: yesterday)' }),
  };

  async run(): Promise<TlsReportSentBody> {
    const sent = await resendTlsReport(this.client, this.args.domain, this.flags.day ?? yesterdayUtc());
    this.log(`Sent the report of ${sent.domain} for ${sent.day} (${sent.reportId}):`);
    for (const outcome of sent.outcomes)
      this.log(`${outcome.ok ? chalk.green('✓') : chalk.red('✗')} ${outcome.uri}  ${chalk.dim(outcome.detail)}`);
    if (sent.outcomes.some((outcome) => !outcome.ok)) process.exitCode = EXIT.refused;
    return sent;
  }
}
