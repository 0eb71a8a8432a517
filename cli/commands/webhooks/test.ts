import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { describeRecord } from '../../records.ts';
import { webhookEndpoints } from '../../services/tenant-resources.ts';
import type { WebhookDelivery } from '../../../shared/schemas/webhooks.ts';

export default class WebhooksTest extends SvcCommand<typeof WebhooksTest> {
  static override operations = ['postWebhooksEndpointsByIdTest'];
  static override summary = 'Send a signed test event to an endpoint now and show what it answered.';
  static override examples = ['<%= config.bin %> webhooks test 3c9e…'];
  static override args = { id: Args.string({ description: 'endpoint id (see `svc webhooks list`)', required: true }) };

  async run(): Promise<WebhookDelivery> {
    const delivery = await webhookEndpoints.test(this.client, this.args.id);
    this.log(describeRecord(delivery, ['id', 'event', 'status', 'statusCode', 'error', 'responseBody', 'deliveredAt']));
    return delivery;
  }
}
