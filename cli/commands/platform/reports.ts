import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pageLine } from '../../format.ts';
import { describeRows } from '../../records.ts';
import { listKeptReports } from '../../services/inbound-reports.ts';
import type { PageOf } from '../../../shared/schemas/common.ts';
import { KEPT_REPORT_DISPOSITIONS, type KeptReportBody } from '../../../shared/schemas/inbound-reports.ts';

export default class PlatformReports extends SvcCommand<typeof PlatformReports> {
  static override operations = ['getPlatformInboundReports'];
  static override summary = 'Bounce and complaint reports kept without effect: unmatched or unverified.';
  static override description =
    'A report that names no recipient its send went to is kept as unmatched; an ARF complaint at fbl@ without a ' +
    "valid DKIM signature of a listed feedback-loop operator is kept as unverified. Neither suppresses, changes a send's " +
    'status or counts toward a pause. Platform admins only.';
  static override examples = [
    '<%= config.bin %> platform reports',
    '<%= config.bin %> platform reports --disposition unverified --json',
  ];
  static override showHeader = false;
  static override flags = {
    disposition: Flags.option({
      options: KEPT_REPORT_DISPOSITIONS,
      description: 'only reports kept for this reason',
    })(),
    page: Flags.integer({ description: 'page number', min: 1 }),
    limit: Flags.integer({ description: 'per page (at most 100)', min: 1, max: 100 }),
  };

  async run(): Promise<PageOf<KeptReportBody>> {
    const { disposition, page, limit } = this.flags;
    const reports = await listKeptReports(this.client, { disposition, page, limit });
    this.log(
      describeRows(
        reports.data,
        ['receivedAt', 'disposition', 'kind', 'source', 'reporter', 'reason'],
        'No kept reports: every report received so far applied to its send.',
      ),
    );
    this.log(pageLine(reports.meta));
    return reports;
  }
}
