import { Args, Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { pageLine, shortDate, table } from '../../format.ts';
import type { Page } from '../../api-types.ts';
import type { WebhookDelivery } from '../../../shared/schemas/webhooks.ts';

const STATUS_COLOUR = { succeeded: chalk.green, failed: chalk.red, pending: chalk.cyan, skipped: chalk.dim } as const;

export default class WebhooksDeliveries extends SvcCommand<typeof WebhooksDeliveries> {
  static override operations = ['getWebhooksEndpointsByIdDeliveries'];
  static override summary = 'List the deliveries of an endpoint, newest first.';
  static override examples = [
    '<%= config.bin %> webhooks deliveries 5e0a…',
    '<%= config.bin %> webhooks deliveries 5e0a… --limit 50 --json',
  ];
  static override args = {
    endpoint: Args.string({ description: 'endpoint id (see `svc webhooks list`)', required: true }),
  };
  static override flags = {
    page: Flags.integer({ min: 1, description: 'page number' }),
    limit: Flags.integer({ min: 1, max: 100, description: 'deliveries per page (default 20)' }),
  };

  async run(): Promise<Page<WebhookDelivery>> {
    const page = await this.client.listDeliveries(this.args.endpoint, {
      page: this.flags.page,
      limit: this.flags.limit,
    });
    this.log(
      table(
        page.data,
        [
          { header: 'ID', value: (d) => d.id },
          { header: 'EVENT', value: (d) => d.event },
          { header: 'STATUS', value: (d) => STATUS_COLOUR[d.status](d.status) },
          { header: 'HTTP', value: (d) => (d.statusCode === null ? '—' : String(d.statusCode)) },
          { header: 'ATTEMPT', value: (d) => String(d.attempt) },
          { header: 'LAST TRY', value: (d) => shortDate(d.deliveredAt) },
          { header: 'ERROR', value: (d) => (d.error ?? '').slice(0, 40) },
        ],
        'No deliveries yet.',
      ),
    );
    this.log(pageLine(page.meta));
    return page;
  }
}
