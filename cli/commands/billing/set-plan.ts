import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { describeRecord } from '../../records.ts';
import { billing } from '../../services/billing.ts';
import type { BillingPlan, UpdateBillingPlanBody } from '../../../shared/schemas/billing.ts';

export default class BillingSetPlan extends SvcCommand<typeof BillingSetPlan> {
  static override operations = ['patchBillingPlansByPlanSlug'];
  static override summary = "Set a plan's Stripe price, AI token grant or availability (platform admins).";
  static override examples = [
    '<%= config.bin %> billing set-plan pro --stripe-price-id price_1Pq…',
    '<%= config.bin %> billing set-plan starter --no-active',
  ];
  static override args = { plan: Args.string({ description: 'plan slug', required: true }) };
  static override flags = {
    'stripe-price-id': Flags.string({ description: 'Stripe price id (price_…), or "none" to clear it' }),
    'ai-token-grant': Flags.integer({ description: 'AI tokens granted with each paid cycle', min: 0 }),
    active: Flags.boolean({ allowNo: true, description: 'offered at checkout' }),
  };

  async run(): Promise<BillingPlan> {
    const f = this.flags;
    const changes: UpdateBillingPlanBody = {};
    if (f['stripe-price-id'] !== undefined)
      changes.stripePriceId = f['stripe-price-id'] === 'none' ? null : f['stripe-price-id'];
    if (f['ai-token-grant'] !== undefined) changes.aiTokenGrant = f['ai-token-grant'];
    if (f.active !== undefined) changes.active = f.active;
    if (Object.keys(changes).length === 0)
      throw new CliFailure('Nothing to change: pass a flag.', EXIT.usage, 'MISSING_FLAG');
    const plan = await billing.updatePlan(this.client, this.args.plan, changes);
    this.log(describeRecord(plan));
    return plan;
  }
}
