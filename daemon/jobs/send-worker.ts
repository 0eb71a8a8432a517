// Worker thread: delivers queued emails (queue "send").
import { runQueueWorker } from './queue-worker.ts';

await runQueueWorker('send');
