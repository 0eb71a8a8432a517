import { SvcCommand } from '../../base-command.ts';
import { describeRecord } from '../../records.ts';
import { billing } from '../../services/billing.ts';
import type { Subscription } from '../../../shared/schemas/billing.ts';

export default class BillingSubscription extends SvcCommand<typeof BillingSubscription> {
  static override operations = ['getBillingSubscription'];
  static override summary = "The current tenant's plan, subscription status and period.";
  static override examples = ['<%= config.bin %> billing subscription'];

  async run(): Promise<Subscription> {
    const subscription = await billing.subscription(this.client);
    this.log(describeRecord(subscription));
    return subscription;
  }
}
