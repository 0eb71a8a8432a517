import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import type { WebhookDelivery } from '../../../shared/schemas/webhooks.ts';

export default class WebhooksReplay extends SvcCommand<typeof WebhooksReplay> {
  static override operations = ['postWebhooksEndpointsByIdDeliveriesByDeliveryIdReplay'];
  static override summary = 'Deliver an event again, as a new delivery with its own retries.';
  static override examples = ['<%= config.bin %> webhooks replay 5e0a… 9c4d…'];
  static override args = {
    endpoint: Args.string({ description: 'endpoint id', required: true }),
    delivery: Args.string({ description: 'delivery id (see `svc webhooks deliveries <endpoint>`)', required: true }),
  };

  async run(): Promise<WebhookDelivery> {
    const delivery = await this.client.replayDelivery(this.args.endpoint, this.args.delivery);
    this.log(`Queued delivery ${delivery.id} (${delivery.event}) as a replay of ${this.args.delivery}.`);
    return delivery;
  }
}
