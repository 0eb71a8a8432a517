// Worker thread (WORKER_THREADS=separate): delivers signed webhook events (webhook-loops.ts).
import { runWorkerThread } from './thread.ts';
import { webhookWorkerBody } from './webhook-loops.ts';

await runWorkerThread(webhookWorkerBody);
