import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { EXIT } from '../../errors.ts';
import { findDomain, renderDiagnosis } from '../../services/domain-report.ts';
import type { DiagnosisBody } from '../../../shared/schemas/domains.ts';

export default class DomainsDiagnose extends SvcCommand<typeof DomainsDiagnose> {
  static override operations = ['getDomains', 'getDomainsByIdDiagnose'];
  static override summary =
    "Explain what is wrong with a domain's DNS and the exact records to publish (changes nothing).";
  static override description = 'Each record gets a mark: ✓ fine, ! warning, ✗ error. Exits 1 when any error is found.';
  static override examples = [
    '<%= config.bin %> domains diagnose mail.acme.com',
    '<%= config.bin %> domains diagnose mail.acme.com --json',
  ];
  static override args = { domain: Args.string({ description: 'domain name or id', required: true }) };

  async run(): Promise<DiagnosisBody> {
    const found = await findDomain(this.client, this.args.domain);
    const diagnosis = await this.client.diagnoseDomain(found.id);
    this.log(renderDiagnosis(diagnosis, found));
    if (!diagnosis.ok) process.exitCode = EXIT.refused;
    return diagnosis;
  }
}
