// Worker thread (WORKER_THREADS=shared, the default): the scheduler, webhook-worker, system-mail,
// maintenance and campaign loops in ONE thread. Each of them waits on the database or the network nearly all the time, and a
// thread costs ~45 MB of resident memory idle (its own V8 heap, modules and connection pool), so
// sharing one keeps a small server small; the send worker keeps a thread of its own.
import { maintenanceBody } from './maintenance-loop.ts';
import { queueWorkerBody } from './queue-worker.ts';
import { runWorkerThread } from './thread.ts';
import { CAMPAIGN_TUNING } from './tuning.ts';
import { webhookWorkerBody } from './webhook-loops.ts';

await runWorkerThread(async (runtime) => {
  await Promise.all([
    queueWorkerBody('scheduled')(runtime),
    webhookWorkerBody(runtime),
    queueWorkerBody('system')(runtime),
    maintenanceBody(runtime),
    queueWorkerBody('campaign', CAMPAIGN_TUNING)(runtime),
  ]);
});
