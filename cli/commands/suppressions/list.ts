import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pageLine, shortDate, table } from '../../format.ts';
import { SUPPRESSION_REASONS } from '../../../shared/constants.ts';
import type { Page, Suppression } from '../../api-types.ts';

export default class SuppressionsList extends SvcCommand<typeof SuppressionsList> {
  static override operations = ['getSuppressions'];
  static override summary = 'List addresses the tenant does not send to.';
  static override examples = [
    '<%= config.bin %> suppressions list',
    '<%= config.bin %> suppressions list --reason bounce --json',
  ];
  static override flags = {
    email: Flags.string({ description: 'only this address' }),
    reason: Flags.option({ options: SUPPRESSION_REASONS, description: 'only this reason' })(),
    page: Flags.integer({ min: 1, description: 'page number' }),
    limit: Flags.integer({ min: 1, max: 100, description: 'entries per page (max 100)' }),
  };

  async run(): Promise<Page<Suppression>> {
    const { email, reason, page, limit } = this.flags;
    const list = await this.client.listSuppressions({ email, reason, page, limit });
    this.log(
      table(
        list.data,
        [
          { header: 'ID', value: (s) => s.id },
          { header: 'EMAIL', value: (s) => s.email },
          { header: 'REASON', value: (s) => s.reason },
          { header: 'SINCE', value: (s) => shortDate(s.createdAt) },
          { header: 'DETAIL', value: (s) => (s.detail ?? '').slice(0, 50) },
        ],
        'No suppressed addresses.',
      ),
    );
    this.log(pageLine(list.meta));
    return list;
  }
}
