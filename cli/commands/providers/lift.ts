import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { liftReaction } from '../../services/shaping.ts';
import type { LiftedReactionBody } from '../../../shared/schemas/shaping.ts';

export default class ProvidersLift extends SvcCommand<typeof ProvidersLift> {
  static override operations = ['deletePlatformReactionsByReactionId'];
  static override summary = 'End a suspension or slow-down now; the rows it held are due at once (platform admins).';
  static override description =
    'For when the provider is fine again or the rule was wrong. A reaction that paused a tenant is lifted with ' +
    '`svc tenants resume-sending`.';
  static override examples = ['<%= config.bin %> providers lift 8d1e…'];
  static override showHeader = false;
  static override args = {
    id: Args.string({
      description: 'the reaction in force (see `svc providers --json`, reactions.data)',
      required: true,
    }),
  };

  async run(): Promise<LiftedReactionBody> {
    const lifted = await liftReaction(this.client, this.args.id);
    this.log(`Lifted ${lifted.id}: ${lifted.rowsDue} held message(s) due now.`);
    return lifted;
  }
}
