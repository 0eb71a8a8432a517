import chalk from 'chalk';
import { Flags } from '@oclif/core';
import { SvcCommand } from '../base-command.ts';
import { EXIT } from '../errors.ts';
import { runLocalDoctor } from '../services/local-doctor.ts';
import type { DoctorReport } from '../../shared/schemas/doctor.ts';

export default class DoctorCommand extends SvcCommand<typeof DoctorCommand> {
  static override operations = ['getPlatformDoctor'];
  static override summary = 'Is this deployment ready? One line per check, with the fix.';
  static override description =
    'Asks the daemon (GET /platform/doctor, platform admins) or, with --local, runs the same checks here from the ' +
    "daemon's environment variables (DATABASE_URL, JWT_SECRET, SMTP_URL, …). Checks: the shared secret, PUBLIC_URL, " +
    'the relay (EHLO, STARTTLS, AUTH), the platform sender domain, Redis when several nodes run, migrations, queues, ' +
    "disk, and the answering daemon's event-loop delay; with DELIVERY=direct also the EHLO name, forward-confirmed " +
    'reverse DNS of the outbound address, the resolver and DNSSEC, outbound port 25, SPF, and the platform domain’s ' +
    'DMARC, MTA-STS and TLS-RPT, as seen from the node named on the first line. Exits 1 when any check fails, so a deploy pipeline can gate on it.';
  static override examples = [
    '<%= config.bin %> doctor',
    '<%= config.bin %> doctor --json',
    'DATABASE_URL=postgres://db/svc JWT_SECRET=… SMTP_URL=smtp://relay:587 <%= config.bin %> doctor --local',
  ];
  static override flags = {
    local: Flags.boolean({
      description: "run the checks in this process from the daemon's environment instead of asking the daemon",
    }),
  };
  static override showHeader = false;

  async run(): Promise<DoctorReport> {
    const report = this.flags.local ? await runLocalDoctor() : await this.client.doctor();
    if (report.node)
      this.log(chalk.dim(`node ${report.node.hostname} (ROLE=${report.node.role}, DELIVERY=${report.node.delivery})`));
    for (const check of report.checks) {
      // A passing check with advice is a warning (e.g. event-loop): shown, but it does not fail the run.
      const mark = !check.ok ? chalk.red('✗') : check.fix ? chalk.yellow('!') : chalk.green('✓');
      this.log(`${mark} ${check.name.padEnd(16)} ${check.message}`);
      if (check.fix) this.log(`  ${' '.repeat(16)} ${chalk.dim('fix:')} ${check.fix}`);
    }
    if (!report.ok) process.exitCode = EXIT.refused;
    return report;
  }
}
