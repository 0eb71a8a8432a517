// Worker thread: delivers signed webhook events, retrying with backoff (queue "webhook").
import { runQueueWorker } from './queue-worker.ts';

await runQueueWorker('webhook');
