// Entry file of every worker thread. Bree starts threads from a file path, and Node cannot load a
// .ts file in a new thread unless a loader is registered there: register tsx in this thread, then
// load the worker module named in workerData (a file URL).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.module);
