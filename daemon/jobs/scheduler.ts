// Worker thread: moves due scheduled sends into the send pipeline (queue "scheduled").
import { runQueueWorker } from './queue-worker.ts';

await runQueueWorker('scheduled');
