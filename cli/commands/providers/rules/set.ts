import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../../base-command.ts';
import { CliFailure, EXIT } from '../../../errors.ts';
import { describeRecord } from '../../../records.ts';
import { ruleFieldsOfFlags, updateReactionRule } from '../../../services/shaping.ts';
import { ruleFlags } from './add.ts';
import type { ReactionRuleBody } from '../../../../shared/schemas/shaping.ts';

export default class ProvidersRulesSet extends SvcCommand<typeof ProvidersRulesSet> {
  static override operations = ['patchPlatformReactionRulesByRuleId'];
  static override summary = 'Change a reaction rule, or enable or disable it (platform admins).';
  static override description =
    'Flags not given keep their value; "none" clears a field. Every MTA loop reloads at once.';
  static override examples = [
    '<%= config.bin %> providers rules set 3f0c… --disable',
    '<%= config.bin %> providers rules set 3f0c… --minutes 30',
  ];
  static override showHeader = false;
  static override args = { id: Args.string({ description: 'rule id (see `svc providers --json`)', required: true }) };
  static override flags = {
    ...ruleFlags,
    enable: Flags.boolean({ description: 'enable the rule', exclusive: ['disable'] }),
    disable: Flags.boolean({ description: 'disable the rule: it matches nothing', exclusive: ['enable'] }),
  };

  async run(): Promise<ReactionRuleBody> {
    const changes = ruleFieldsOfFlags(this.flags);
    if (this.flags.enable) changes.enabled = true;
    if (this.flags.disable) changes.enabled = false;
    if (Object.keys(changes).length === 0)
      throw new CliFailure('Pass a field to change, --enable or --disable.', EXIT.usage, 'MISSING_FLAG');
    const rule = await updateReactionRule(this.client, this.args.id, changes);
    this.log(describeRecord(rule));
    return rule;
  }
}
