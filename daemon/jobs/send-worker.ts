// Worker thread: delivers queued emails (queue "send"). With DELIVERY=direct it composes, signs and
// spools them; the outbound MTA's thread (mta-worker.ts) delivers the spool.
import { queueWorkerBody } from './queue-worker.ts';
import { runWorkerThread } from './thread.ts';

await runWorkerThread(async (runtime) => queueWorkerBody('send')(runtime));
