import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { webhookEndpoints } from '../../services/tenant-resources.ts';
import type { WebhookEndpoint } from '../../../shared/schemas/webhooks.ts';

export default class WebhooksToggle extends SvcCommand<typeof WebhooksToggle> {
  static override operations = ['patchWebhooksEndpointsByIdToggle'];
  static override summary = 'Turn a webhook endpoint off, or back on (its failure streak starts again).';
  static override examples = ['<%= config.bin %> webhooks toggle 3c9e…'];
  static override args = { id: Args.string({ description: 'endpoint id (see `svc webhooks list`)', required: true }) };

  async run(): Promise<WebhookEndpoint> {
    const endpoint = await webhookEndpoints.toggle(this.client, this.args.id);
    this.log(`${endpoint.url} is ${endpoint.enabled ? 'on' : 'off'}.`);
    return endpoint;
  }
}
