// Entry file of every worker thread. Bree starts threads from a file path. The daemon runs from
// its compiled build (daemon/build.ts), where workerData.module is a .js file and nothing else is
// needed; tests start threads from the .ts sources, where tsx's loader is registered first.
import { workerData } from 'node:worker_threads';

if (workerData.module.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.module);
