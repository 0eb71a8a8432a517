import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';

export default class SuppressionsRemove extends SvcCommand<typeof SuppressionsRemove> {
  static override operations = ['deleteSuppressions', 'deleteSuppressionsById'];
  static override summary = 'Send to an address again (by address or suppression id).';
  static override examples = [
    '<%= config.bin %> suppressions remove ada@example.com',
    '<%= config.bin %> suppressions remove 7d1e…',
  ];
  static override args = { target: Args.string({ description: 'the address, or the suppression id', required: true }) };

  async run(): Promise<{ removed: string }> {
    const { target } = this.args;
    if (target.includes('@')) await this.client.removeSuppressionByEmail(target);
    else await this.client.removeSuppression(target);
    this.log(`${target} is no longer suppressed.`);
    return { removed: target };
  }
}
