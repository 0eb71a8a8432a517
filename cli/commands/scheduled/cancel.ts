import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { scheduledSends } from '../../services/tenant-resources.ts';
import type { ScheduledEmail } from '../../../shared/schemas/scheduled.ts';

export default class ScheduledCancel extends SvcCommand<typeof ScheduledCancel> {
  static override operations = ['deleteScheduledEmailsById'];
  static override summary = 'Cancel a scheduled send that has not gone out yet.';
  static override examples = ['<%= config.bin %> scheduled cancel 8a41…'];
  static override args = { id: Args.string({ description: 'scheduled send id', required: true }) };

  async run(): Promise<ScheduledEmail> {
    const scheduled = await scheduledSends.cancel(this.client, this.args.id);
    this.log(`Scheduled send ${scheduled.id} is ${scheduled.status}.`);
    return scheduled;
  }
}
