import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { SUPPRESSION_REASONS } from '../../../shared/constants.ts';
import type { Suppression } from '../../api-types.ts';

export default class SuppressionsAdd extends SvcCommand<typeof SuppressionsAdd> {
  static override operations = ['postSuppressions'];
  static override summary = 'Stop sending to an address.';
  static override examples = [
    '<%= config.bin %> suppressions add ada@example.com',
    '<%= config.bin %> suppressions add grace@example.com --reason complaint',
  ];
  static override args = { email: Args.string({ description: 'address to suppress', required: true }) };
  static override flags = {
    reason: Flags.option({ options: SUPPRESSION_REASONS, default: 'manual' as const, description: 'why' })(),
  };

  async run(): Promise<Suppression> {
    const suppression = await this.client.addSuppression(this.args.email, this.flags.reason);
    this.log(`Suppressed ${suppression.email} (${suppression.reason}).`);
    return suppression;
  }
}
