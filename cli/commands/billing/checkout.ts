import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { billing } from '../../services/billing.ts';

export default class BillingCheckout extends SvcCommand<typeof BillingCheckout> {
  static override operations = ['postBillingCheckout'];
  static override summary = 'A Stripe checkout link to subscribe the tenant to a plan (open it in a browser).';
  static override examples = [
    '<%= config.bin %> billing checkout pro --success-url https://app.example.com/ok --cancel-url https://app.example.com/',
  ];
  static override args = { plan: Args.string({ description: 'plan slug (see `svc billing plans`)', required: true }) };
  static override flags = {
    'success-url': Flags.string({ description: 'where Stripe sends the browser after paying', required: true }),
    'cancel-url': Flags.string({ description: 'where Stripe sends the browser when cancelled', required: true }),
  };

  async run(): Promise<{ url: string }> {
    const answer = await billing.checkout(this.client, {
      planSlug: this.args.plan,
      successUrl: this.flags['success-url'],
      cancelUrl: this.flags['cancel-url'],
    });
    this.log(answer.url);
    return answer;
  }
}
