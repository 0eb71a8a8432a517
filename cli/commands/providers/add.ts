import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRecord } from '../../records.ts';
import { createProvider, limitFlag } from '../../services/shaping.ts';
import type { ProviderRuleBody } from '../../../shared/schemas/shaping.ts';

export default class ProvidersAdd extends SvcCommand<typeof ProvidersAdd> {
  static override operations = ['postPlatformProviders'];
  static override summary = 'Add a provider matched by its MX host names, before the shipped ones (platform admins).';
  static override examples = [
    '<%= config.bin %> providers add proofpoint --label Proofpoint --mx-pattern "*.pphosted.com" --max-connections 4 --per-connection 30',
  ];
  static override showHeader = false;
  static override args = {
    key: Args.string({ description: 'key: lower-case letters, digits, dashes', required: true }),
  };
  static override flags = {
    label: Flags.string({ description: 'display name', required: true }),
    'mx-pattern': Flags.string({
      description: 'MX host name pattern (*.example.net or a whole name); repeat for several',
      multiple: true,
      required: true,
    }),
    'max-connections': Flags.integer({ description: 'connections open at once', min: 1, max: 1000, required: true }),
    'per-connection': Flags.integer({
      description: 'messages one connection carries',
      min: 1,
      max: 100_000,
      required: true,
    }),
    'per-minute': Flags.string({ description: 'messages a minute, or "none" (default) for no rate limit' }),
  };

  async run(): Promise<ProviderRuleBody> {
    const provider = await createProvider(this.client, {
      key: this.args.key,
      label: this.flags.label,
      mxPatterns: this.flags['mx-pattern'],
      maxConnections: this.flags['max-connections'],
      maxMessagesPerConnection: this.flags['per-connection'],
      messagesPerMinute: limitFlag('per-minute', this.flags['per-minute'], 'integer') ?? null,
    });
    this.log(describeRecord(provider));
    return provider;
  }
}
