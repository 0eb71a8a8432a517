import { SvcCommand } from '../../base-command.ts';
import { describeRows } from '../../records.ts';
import { billing } from '../../services/billing.ts';
import type { BillingPlan } from '../../../shared/schemas/billing.ts';

export default class BillingPlans extends SvcCommand<typeof BillingPlans> {
  static override operations = ['getBillingPlans'];
  static override summary = 'List the plans, their monthly limits and Stripe prices.';
  static override examples = ['<%= config.bin %> billing plans --json'];

  async run(): Promise<{ data: BillingPlan[] }> {
    const answer = await billing.plans(this.client);
    this.log(
      describeRows(answer.data, ['planSlug', 'name', 'monthlyEmailLimit', 'aiTokenGrant', 'stripePriceId', 'active']),
    );
    return answer;
  }
}
