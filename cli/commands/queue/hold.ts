import { Args, Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { outboundQueue } from '../../services/outbound-queue.ts';
import type { OutboundDestination } from '../../../shared/schemas/outbound-queue.ts';

export default class QueueHold extends SvcCommand<typeof QueueHold> {
  static override operations = ['postPlatformQueueByDomainHold'];
  static override summary = 'Hold a destination: its mail stays in the queue, untried, until released.';
  static override description =
    "The MTA loop stops taking the domain's messages (those being delivered right now finish). Mail accepted for the " +
    'domain later waits too, so a domain may be held before anything is queued for it. Held messages keep their ' +
    'expiry (DELIVERY_EXPIRY_HOURS): one held past it bounces if its first try after release fails. Platform admins only.';
  static override examples = ['<%= config.bin %> queue hold example.com --reason "their MX rejects us, ticket #42"'];
  static override showHeader = false;
  static override args = { domain: Args.string({ description: 'destination domain', required: true }) };
  static override flags = {
    reason: Flags.string({ description: 'why, shown in `svc queue`', env: 'SVC_HOLD_REASON' }),
  };

  async run(): Promise<OutboundDestination> {
    const destination = await outboundQueue.hold(this.client, this.args.domain, this.flags.reason);
    const waiting = destination.queued + destination.deferred;
    this.log(
      `${destination.domain} is held (${waiting} message(s) waiting` +
        (destination.inFlight ? `, ${destination.inFlight} being delivered now` : '') +
        `). Release it with \`svc queue release ${destination.domain}\`.`,
    );
    return destination;
  }
}
