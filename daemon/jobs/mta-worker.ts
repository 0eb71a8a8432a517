// Worker thread: the outbound MTA's per-destination loop (jobs/mta-loop.ts) with DELIVERY=direct. It
// has a thread of its own, apart from the send worker that composes, signs and spools: sharing one
// thread, the two took turns on one core (composing 100 KB and RSA signing held delivery for seconds
// at a time) while the node's other core sat idle (docs/mta.md "Performance").
import { runMtaLoop } from './mta-loop.ts';
import { runWorkerThread } from './thread.ts';

await runWorkerThread(runMtaLoop);
