import { Args } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { removeReactionRule } from '../../../services/shaping.ts';

export default class ProvidersRulesRemove extends SvcCommand<typeof ProvidersRulesRemove> {
  static override operations = ['deletePlatformReactionRulesByRuleId'];
  static override summary = 'Remove a reaction rule; the reactions it drew stay listed (platform admins).';
  static override examples = ['<%= config.bin %> providers rules remove 3f0c…'];
  static override showHeader = false;
  static override args = { id: Args.string({ description: 'rule id (see `svc providers --json`)', required: true }) };

  async run(): Promise<{ ok: true }> {
    const removed = await removeReactionRule(this.client, this.args.id);
    this.log(`Removed reaction rule ${this.args.id}.`);
    return removed;
  }
}
