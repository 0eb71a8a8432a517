import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pageLine } from '../../format.ts';
import { describeRows } from '../../records.ts';
import { scheduledSends } from '../../services/tenant-resources.ts';
import { SCHEDULED_STATUSES } from '../../../shared/constants.ts';
import type { PageOf } from '../../../shared/schemas/common.ts';
import type { ScheduledEmail } from '../../../shared/schemas/scheduled.ts';

const STATUSES = SCHEDULED_STATUSES;

export default class ScheduledList extends SvcCommand<typeof ScheduledList> {
  static override operations = ['getScheduledEmails'];
  static override summary = 'List scheduled sends (`svc send --schedule …`), soonest first.';
  static override examples = [
    '<%= config.bin %> scheduled list',
    '<%= config.bin %> scheduled list --status PENDING --json',
  ];
  static override flags = {
    status: Flags.option({ options: STATUSES, description: 'only this status' })(),
    page: Flags.integer({ description: 'page number', min: 1 }),
    limit: Flags.integer({ description: 'per page (at most 100)', min: 1, max: 100 }),
  };

  async run(): Promise<PageOf<ScheduledEmail>> {
    const { status, page, limit } = this.flags;
    const answer = await scheduledSends.list(this.client, { status, page, limit });
    this.log(describeRows(answer.data, ['id', 'status', 'sendAt', 'timezone', 'emailId'], 'Nothing scheduled.'));
    this.log(pageLine(answer.meta));
    return answer;
  }
}
