// A separate daemon-like process for the SIGKILL test: real worker threads that claim jobs and
// hold their leases until the process is killed.
// Usage: node --import tsx test/helpers/queue-child.ts <databaseUrl> <queue> <embedded|external>
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadConfig } from '../../daemon/config.ts';
import { loadSecrets } from '../../daemon/secrets.ts';
import { startWorkers } from '../../daemon/jobs/index.ts';
import { TEST_WORKER_MODULE } from './queue-test.ts';

const [databaseUrl, queue, mode] = process.argv.slice(2);
const dataDir = mkdtempSync(join(tmpdir(), 'svc-queue-child-'));
const config = loadConfig({
  NODE_ENV: 'test',
  DATA_DIR: dataDir,
  LOG_LEVEL: 'silent',
  ...(mode === 'external' ? { DATABASE_URL: databaseUrl } : {}),
});
await startWorkers({
  config,
  databaseUrl,
  secrets: loadSecrets(dataDir, 'queue-child-secret-that-is-long-enough-0123'),
  log: pino({ level: 'silent' }),
  workers: [{ name: 'holder', module: TEST_WORKER_MODULE, options: { queue } }],
  tuning: { leaseMs: 1_500, embeddedPollMs: 100, pollMs: 500, concurrency: 10, batchSize: 10 },
});
process.stdout.write(`ready ${process.pid}\n`);
setInterval(() => {}, 60_000);
