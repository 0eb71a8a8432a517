import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { billing } from '../../services/billing.ts';

export default class BillingPortal extends SvcCommand<typeof BillingPortal> {
  static override operations = ['postBillingPortal'];
  static override summary = 'A Stripe customer-portal link (invoices, card, cancel) for the tenant.';
  static override examples = ['<%= config.bin %> billing portal --return-url https://app.example.com/billing'];
  static override flags = { 'return-url': Flags.string({ description: 'where the portal sends the browser back' }) };

  async run(): Promise<{ url: string }> {
    const answer = await billing.portal(this.client, this.flags['return-url']);
    this.log(answer.url);
    return answer;
  }
}
