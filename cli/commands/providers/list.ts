import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { table } from '../../format.ts';
import { listProviders, listReactions, rateText } from '../../services/shaping.ts';
import type { ProviderRulesBody, ReactionsBody } from '../../../shared/schemas/shaping.ts';

export default class ProvidersList extends SvcCommand<typeof ProvidersList> {
  static override operations = ['getPlatformProviders', 'getPlatformReactions'];
  static override summary =
    'Provider shaping rules, reaction rules, and the suspensions, slow-downs and pauses in force (platform admins).';
  static override description =
    'Providers are matched by MX host names in the order shown; each worker node uses its share of every figure ' +
    '(the figure divided by the live worker nodes). Change rules with `svc providers rules add|set|remove`; end a ' +
    'suspension or slow-down early with `svc providers lift <id>`.';
  static override examples = ['<%= config.bin %> providers', '<%= config.bin %> providers --json'];
  static override showHeader = false;

  async run(): Promise<{ providers: ProviderRulesBody; reactions: ReactionsBody }> {
    const [providers, reactions] = await Promise.all([listProviders(this.client), listReactions(this.client)]);
    this.log(
      table(providers.data, [
        { header: 'PROVIDER', value: (p) => p.key },
        { header: 'CONNECTIONS', value: (p) => String(p.maxConnections) },
        { header: 'PER CONNECTION', value: (p) => String(p.maxMessagesPerConnection) },
        { header: 'RATE', value: (p) => rateText(p.messagesPerMinute, 'min') },
        { header: 'ORIGIN', value: (p) => p.origin },
        { header: 'MX PATTERNS', value: (p) => (p.mxPatterns.length > 0 ? p.mxPatterns.join(' ') : '(anything else)') },
      ]),
    );
    this.log(`Worker nodes sharing these figures: ${providers.workerNodes}.`);
    this.log('');
    this.log(
      table(
        reactions.rules,
        [
          { header: 'RULE', value: (r) => r.id },
          { header: 'ON', value: (r) => (r.enabled ? 'yes' : chalk.dim('no')) },
          { header: 'PROVIDER', value: (r) => r.providerKey ?? 'any' },
          {
            header: 'REPLY',
            value: (r) =>
              [
                r.replyCode,
                r.enhancedCode,
                r.textPattern ? `/${r.textPattern}/` : null,
                r.patternProblem ? chalk.red(`(matches nothing: ${r.patternProblem})`) : null,
              ]
                .filter(Boolean)
                .join(' '),
          },
          {
            header: 'ACTION',
            value: (r) =>
              r.action === 'pause_tenant'
                ? 'pause the tenant'
                : `${r.action === 'slow' ? `slow ×${r.factor}` : 'suspend'} ${r.scope} ${r.minutes} min`,
          },
          { header: 'WHY', value: (r) => r.description },
        ],
        'No reaction rules.',
      ),
    );
    this.log('');
    this.log(
      table(
        reactions.data,
        [
          { header: 'IN FORCE', value: (a) => chalk.yellow(a.kind) },
          { header: 'ID', value: (a) => a.id },
          { header: 'PROVIDER', value: (a) => a.providerKey },
          { header: 'DESTINATION', value: (a) => a.domain ?? 'all' },
          { header: 'UNTIL', value: (a) => a.until ?? 'resumed by an owner' },
          { header: 'TENANT', value: (a) => a.tenantId ?? '' },
          { header: 'REPLY', value: (a) => a.reason.slice(0, 80) },
        ],
        'No suspension, slow-down or pause in force.',
      ),
    );
    return { providers, reactions };
  }
}
