// The real daemon (startDaemon, as `svc daemon start` runs it) in a child process of the bench, so
// that it owns its event loop as in production. Configured only through the environment; prints
// "ready <url>" once the API listens and the worker threads are up.
import { loadConfig } from '../daemon/config.ts';
import { startDaemon } from '../daemon/main.ts';

const daemon = await startDaemon(loadConfig(process.env));
console.log(`ready ${daemon.url || '-'}`);
const stop = () => {
  daemon.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
