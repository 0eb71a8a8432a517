// Worker thread: expands campaign audiences into sends, a chunk per transaction (queue "campaign").
import { runQueueWorker } from './queue-worker.ts';

await runQueueWorker('campaign');
