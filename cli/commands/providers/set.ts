import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { CliFailure, EXIT } from '../../errors.ts';
import { describeRecord } from '../../records.ts';
import { limitFlag, updateProvider } from '../../services/shaping.ts';
import type { ProviderRuleBody, UpdateProviderBody } from '../../../shared/schemas/shaping.ts';

export default class ProvidersSet extends SvcCommand<typeof ProvidersSet> {
  static override operations = ['putPlatformProvidersByKey'];
  static override summary =
    "Change a provider's shaping: connections, messages per connection, rate (platform admins).";
  static override description =
    'Flags not given keep their value. Every MTA loop reloads at once. Figures are for the whole platform; ' +
    'each worker node uses its share.';
  static override examples = [
    '<%= config.bin %> providers set google --max-connections 5 --per-connection 50',
    '<%= config.bin %> providers set yahoo --per-minute 600',
    '<%= config.bin %> providers set yahoo --per-minute none',
  ];
  static override showHeader = false;
  static override args = { key: Args.string({ description: 'provider key (see `svc providers`)', required: true }) };
  static override flags = {
    'max-connections': Flags.integer({ description: 'connections open at once', min: 1, max: 1000 }),
    'per-connection': Flags.integer({ description: 'messages one connection carries', min: 1, max: 100_000 }),
    'per-minute': Flags.string({ description: 'messages a minute, or "none" for no rate limit' }),
    label: Flags.string({ description: 'display name' }),
    'mx-pattern': Flags.string({
      description: 'MX host name pattern (*.example.net); repeat for several; replaces the list',
      multiple: true,
    }),
  };

  async run(): Promise<ProviderRuleBody> {
    const changes: UpdateProviderBody = {};
    if (this.flags['max-connections'] !== undefined) changes.maxConnections = this.flags['max-connections'];
    if (this.flags['per-connection'] !== undefined) changes.maxMessagesPerConnection = this.flags['per-connection'];
    const perMinute = limitFlag('per-minute', this.flags['per-minute'], 'integer');
    if (perMinute !== undefined) changes.messagesPerMinute = perMinute;
    if (this.flags.label !== undefined) changes.label = this.flags.label;
    if (this.flags['mx-pattern'] !== undefined) changes.mxPatterns = this.flags['mx-pattern'];
    if (Object.keys(changes).length === 0)
      throw new CliFailure(
        'Pass at least one of --max-connections, --per-connection, --per-minute, --label, --mx-pattern.',
        EXIT.usage,
        'MISSING_FLAG',
      );
    const provider = await updateProvider(this.client, this.args.key, changes);
    this.log(describeRecord(provider));
    return provider;
  }
}
