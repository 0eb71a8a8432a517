// SEND_THREADS (default 1): the node's SMTP_MAX_CONNECTIONS is shared out between its send threads (the
// relay sees the node's limit, test/scale-out.test.ts), each keeping the concurrency of the node's pool.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../daemon/config.ts';
import { daemonWorkers, smtpConnectionShares } from '../daemon/jobs/index.ts';
import { sendWorkerTuning } from '../daemon/jobs/tuning.ts';

test('one send thread unless SEND_THREADS says more, on every role', () => {
  for (const role of ['all', 'api', 'worker', 'smtp']) assert.is(loadConfig({ ROLE: role }).sendThreads, 1);
  assert.is(loadConfig({ ROLE: 'worker', SEND_THREADS: '2' }).sendThreads, 2);
});

test('the SMTP connections are shared out: they add up to the limit, and every thread has one', () => {
  assert.equal(smtpConnectionShares(5, 1), [5]);
  assert.equal(smtpConnectionShares(5, 2), [3, 2]);
  assert.equal(smtpConnectionShares(10, 4), [3, 3, 2, 2]);
  assert.equal(smtpConnectionShares(2, 3), [1, 1, 1]);
});

test('each send thread runs with its share of the connections and the concurrency of the whole pool', () => {
  const config = loadConfig({ ROLE: 'worker', SEND_THREADS: '2', SMTP_MAX_CONNECTIONS: '5' });
  const workers = daemonWorkers(config);
  const sends = workers.filter((worker) => worker.name.startsWith('send-worker'));
  assert.equal(
    sends.map((worker) => [worker.name, worker.config?.smtpMaxConnections]),
    [
      ['send-worker', 3],
      ['send-worker-2', 2],
    ],
  );
  const threadConfig = { ...config, ...sends[1].config };
  assert.equal(sends[1].tuning?.(threadConfig), sendWorkerTuning({ smtpMaxConnections: 5 }));
  // One send thread keeps the node's whole pool, as before.
  const single = daemonWorkers(loadConfig({ SEND_THREADS: '1', SMTP_MAX_CONNECTIONS: '5' }));
  assert.equal(
    single.filter((worker) => worker.name.startsWith('send-worker')).map((worker) => worker.config),
    [undefined],
  );
  // The MTA's thread joins with DELIVERY=direct, once per node.
  const direct = daemonWorkers(loadConfig({ ROLE: 'worker', SEND_THREADS: '2', DELIVERY: 'direct' }));
  assert.is(direct.filter((worker) => worker.name === 'mta-worker').length, 1);
});

test.run();
