import { Args } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { outboundQueue } from '../../services/outbound-queue.ts';
import type { RetryDestinationAnswer } from '../../../shared/schemas/outbound-queue.ts';

export default class QueueRetry extends SvcCommand<typeof QueueRetry> {
  static override operations = ['postPlatformQueueByDomainRetry'];
  static override summary = "Try a destination's deferred mail now instead of at its next retry time.";
  static override description =
    'Moves the next try of every message waiting for the domain to now and wakes the MTA loop. Fails when nothing is ' +
    'spooled for the domain. A held domain stays held: release it to deliver. Platform admins only.';
  static override examples = ['<%= config.bin %> queue retry gmail.com'];
  static override showHeader = false;
  static override args = { domain: Args.string({ description: 'destination domain', required: true }) };

  async run(): Promise<RetryDestinationAnswer> {
    const answer = await outboundQueue.retry(this.client, this.args.domain);
    const { domain, held } = answer.destination;
    this.log(
      `${answer.madeDue} message(s) to ${domain} are due now` +
        (held ? `; ${domain} is held: run \`svc queue release ${domain}\` to deliver them.` : '.'),
    );
    return answer;
  }
}
