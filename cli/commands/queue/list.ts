import { Flags } from '@oclif/core';
import { SvcCommand } from '../../base-command.ts';
import { pageLine } from '../../format.ts';
import {
  deliveryWarning,
  outboundQueue,
  queueTable,
  reactionLines,
  resolverLines,
  sourceFaultLines,
} from '../../services/outbound-queue.ts';
import { renderQueue } from '../../ui/render.ts';
import type { OutboundQueuePage } from '../../../shared/schemas/outbound-queue.ts';

export default class QueueList extends SvcCommand<typeof QueueList> {
  static override operations = [
    'getPlatformQueue',
    'postPlatformQueueByDomainRetry',
    'postPlatformQueueByDomainHold',
    'postPlatformQueueByDomainRelease',
  ];
  static override summary =
    'The outbound queue per destination domain: queued, deferred, in flight, next try, last response.';
  static override description =
    "Mail the daemon's own MTA (DELIVERY=direct) has not delivered yet, per recipient domain, oldest first; held " +
    'destinations are listed even with nothing queued. With --watch, a live screen in a terminal that refreshes every ' +
    '3 s, where t retries the selected domain now, h holds it and u releases it (also reachable from `svc dashboard` with o). ' +
    'Platform admins only.';
  static override examples = [
    '<%= config.bin %> queue',
    '<%= config.bin %> queue --domain gmail.com --json',
    '<%= config.bin %> queue --watch',
  ];
  static override showHeader = false;
  static override flags = {
    domain: Flags.string({ description: 'only this destination domain', env: 'SVC_QUEUE_DOMAIN' }),
    watch: Flags.boolean({ description: 'a live screen that refreshes every 3 s (needs a terminal)' }),
    page: Flags.integer({ description: 'page number', min: 1 }),
    limit: Flags.integer({ description: 'destinations per page (at most 500)', min: 1, max: 500 }),
  };

  async run(): Promise<OutboundQueuePage | void> {
    const { domain, page, limit, watch } = this.flags;
    const query = { domain, page, limit };
    if (watch) {
      // Refuses without a terminal, naming the plain command instead.
      await renderQueue({
        load: () => outboundQueue.list(this.client, query),
        actions: {
          retry: async (name) => void (await outboundQueue.retry(this.client, name)),
          hold: async (name) => void (await outboundQueue.hold(this.client, name)),
          release: async (name) => void (await outboundQueue.release(this.client, name)),
        },
      });
      return;
    }
    const answer = await outboundQueue.list(this.client, query);
    const warning = deliveryWarning(answer);
    if (warning) this.logToStderr(warning);
    for (const line of resolverLines(answer)) this.log(line);
    for (const line of sourceFaultLines(answer)) this.log(line);
    this.log(queueTable(answer.data));
    this.log(pageLine(answer.meta));
    for (const line of reactionLines(answer)) this.log(line);
    return answer;
  }
}
