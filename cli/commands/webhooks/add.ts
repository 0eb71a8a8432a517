import { Flags } from '@oclif/core';
import chalk from 'chalk';
import { SvcCommand } from '../../base-command.ts';
import { keyValue } from '../../format.ts';
import { EMAIL_EVENT_TYPES } from '../../../shared/constants.ts';
import type { CreatedWebhookEndpoint } from '../../../shared/schemas/webhooks.ts';

export default class WebhooksAdd extends SvcCommand<typeof WebhooksAdd> {
  static override operations = ['postWebhooksEndpoints'];
  static override summary = 'Register a URL to receive signed events; prints the signing secret once.';
  static override examples = [
    '<%= config.bin %> webhooks add --url https://hooks.acme.com/svc --event email.delivered --event email.bounced',
    '<%= config.bin %> webhooks add --url https://hooks.acme.com/svc --all-events --json | jq -r .secret',
  ];
  static override flags = {
    url: Flags.string({ description: 'https URL receiving events', required: true }),
    event: Flags.option({
      options: EMAIL_EVENT_TYPES,
      multiple: true,
      description: 'event type to subscribe to (repeat)',
    })(),
    'all-events': Flags.boolean({ description: 'subscribe to every event type', exclusive: ['event'] }),
    secret: Flags.string({ description: 'signing secret to use (generated when omitted)' }),
  };

  async run(): Promise<CreatedWebhookEndpoint> {
    const events = this.flags['all-events']
      ? [...EMAIL_EVENT_TYPES]
      : this.requireInput(this.flags.event, '--event (repeatable) or --all-events', 'the event types to deliver');
    const endpoint = await this.client.addWebhook({
      url: this.flags.url,
      events,
      ...(this.flags.secret ? { secret: this.flags.secret } : {}),
    });
    this.log(
      keyValue([
        ['id', endpoint.id],
        ['url', endpoint.url],
        ['events', endpoint.events.join(', ')],
      ]),
    );
    this.log(
      `\nSigning secret: ${chalk.bold(endpoint.secret)}\n${chalk.yellow('Shown only now: verify X-Service-Signature with it.')}`,
    );
    return endpoint;
  }
}
