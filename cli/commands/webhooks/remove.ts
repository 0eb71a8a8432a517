import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { webhookEndpoints } from '../../services/tenant-resources.ts';

export default class WebhooksRemove extends SvcCommand<typeof WebhooksRemove> {
  static override operations = ['deleteWebhooksEndpointsById'];
  static override summary = 'Delete a webhook endpoint and its pending deliveries.';
  static override examples = ['<%= config.bin %> webhooks remove 3c9e…'];
  static override args = { id: Args.string({ description: 'endpoint id (see `svc webhooks list`)', required: true }) };

  async run(): Promise<{ id: string; removed: true }> {
    await webhookEndpoints.remove(this.client, this.args.id);
    this.log(`Removed webhook endpoint ${this.args.id}.`);
    return { id: this.args.id, removed: true };
  }
}
