// Worker thread: delivers the service's own mail (queue "system"), apart from tenant sends.
import { runQueueWorker } from './queue-worker.ts';

await runQueueWorker('system');
