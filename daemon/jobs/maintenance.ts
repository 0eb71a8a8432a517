// Worker thread (WORKER_THREADS=separate): the maintenance loops on their own (maintenance-loop.ts).
import { maintenanceBody } from './maintenance-loop.ts';
import { runWorkerThread } from './thread.ts';

await runWorkerThread(maintenanceBody);
