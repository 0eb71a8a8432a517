import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { pageLine, shortDate, table } from '../../format.ts';
import type { Page } from '../../api-types.ts';
import type { WebhookEndpoint } from '../../../shared/schemas/webhooks.ts';

export default class WebhooksList extends SvcCommand<typeof WebhooksList> {
  static override operations = ['getWebhooksEndpoints'];
  static override summary = 'List webhook endpoints, with their failure streaks.';
  static override examples = ['<%= config.bin %> webhooks list', '<%= config.bin %> webhooks list --json'];

  async run(): Promise<Page<WebhookEndpoint>> {
    const page = await this.client.listWebhooks({ limit: 100 });
    this.log(
      table(
        page.data,
        [
          { header: 'ID', value: (e) => e.id },
          { header: 'URL', value: (e) => e.url },
          {
            header: 'STATE',
            value: (e) =>
              e.enabled ? chalk.green('on') : chalk.red(`off${e.disabledReason ? ` (${e.disabledReason})` : ''}`),
          },
          {
            header: 'FAILURES',
            value: (e) => (e.consecutiveFailures ? chalk.red(String(e.consecutiveFailures)) : '0'),
          },
          { header: 'EVENTS', value: (e) => e.events.join(',') },
          { header: 'CREATED', value: (e) => shortDate(e.createdAt) },
        ],
        'No webhook endpoints: add one with `svc webhooks add --url <url> --event email.delivered`.',
      ),
    );
    this.log(pageLine(page.meta));
    return page;
  }
}
