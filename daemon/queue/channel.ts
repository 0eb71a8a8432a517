// LISTEN/NOTIFY channel names: one per queue, so a worker wakes only for its own queue.
import type { QueueName } from '../../shared/constants.ts';

/** The channel enqueueJob notifies and a queue's workers LISTEN on. */
export function queueChannel(queue: QueueName): string {
  return `svc_jobs_${queue.replace(/[^a-z0-9_]/gi, '_')}`;
}
