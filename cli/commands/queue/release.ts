import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { outboundQueue } from '../../services/outbound-queue.ts';
import type { OutboundDestination } from '../../../shared/schemas/outbound-queue.ts';

export default class QueueRelease extends SvcCommand<typeof QueueRelease> {
  static override operations = ['postPlatformQueueByDomainRelease'];
  static override summary = "End a destination's hold: its mail is tried at once.";
  static override description = 'Fails when the domain is not held. Platform admins only.';
  static override examples = ['<%= config.bin %> queue release example.com'];
  static override showHeader = false;
  static override args = { domain: Args.string({ description: 'destination domain', required: true }) };

  async run(): Promise<OutboundDestination> {
    const destination = await outboundQueue.release(this.client, this.args.domain);
    this.log(`${destination.domain} is released: ${destination.queued + destination.deferred} message(s) are due now.`);
    return destination;
  }
}
