// Several daemons on one database: an API node and a worker node started with the same JWT_SECRET
// share the work (the API node accepts, the worker node signs with the DKIM key the first sealed
// and delivers); a node with another secret, or with none (a fresh DATA_DIR generates its own),
// refuses to boot with exit code 78 and one sentence naming JWT_SECRET.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SECRET_MISMATCH_MESSAGE } from '../daemon/secrets.ts';
import {
  api,
  killAllDaemons,
  seedSendWorld,
  SENDING_DOMAIN,
  startChildDaemon,
  stopChildDaemon,
  type SendWorld,
} from './helpers/send-daemon.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { waitFor } from './helpers/wait.ts';

const SVC = fileURLToPath(new URL('../bin/svc.js', import.meta.url));
let sink: SmtpSink;
let world: SendWorld;
const spareDirs: string[] = [];

test.before(async () => {
  sink = await startSmtpSink();
  world = await seedSendWorld({ SMTP_URL: `smtp://127.0.0.1:${sink.port}`, LOG_LEVEL: 'info' });
});

test.after(async () => {
  killAllDaemons();
  await sink.close();
  await world.database.drop();
  for (const dir of spareDirs) rmSync(dir, { recursive: true, force: true });
});

function spareDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-node-'));
  spareDirs.push(dir);
  return dir;
}

interface Node {
  output(): string;
  exit: Promise<number | null>;
  kill(): void;
}

/** `svc daemon start` with the world's environment plus `env`; resolves once `readyLine` is logged. */
function startNode(env: Record<string, string | undefined>): Node {
  const base: Record<string, string | undefined> = { ...process.env, ...world.env, ...env };
  delete base.NODE_OPTIONS;
  for (const [name, value] of Object.entries(base)) if (value === undefined) delete base[name];
  const child = spawn(process.execPath, [SVC, 'daemon', 'start'], {
    env: base as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { output: () => output, exit, kill: () => child.kill('SIGTERM') };
}

async function waitForLine(node: Node, pattern: RegExp, timeoutMs = 90_000): Promise<void> {
  let exited = false;
  void node.exit.then(() => (exited = true));
  await waitFor(
    `the node to log ${pattern}`,
    () => {
      if (exited) throw new Error(`the node exited before logging ${pattern}:\n${node.output()}`);
      return pattern.test(node.output());
    },
    { timeoutMs, intervalMs: 100, details: node.output },
  );
}

async function expectRefusal(env: Record<string, string | undefined>): Promise<void> {
  const node = startNode(env);
  const code = await node.exit;
  assert.is(code, 78, node.output());
  // oclif wraps the error at the terminal width behind "›" marks: read it as one line.
  const said = node
    .output()
    .replace(/\s*\n\s*›\s*/g, ' ')
    .replace(/ +/g, ' ');
  assert.ok(said.includes(`Configuration: JWT_SECRET: ${SECRET_MISMATCH_MESSAGE}`), node.output());
  assert.not.match(node.output(), world.env.JWT_SECRET);
}

test('an API node and a worker node on one PostgreSQL with one secret accept and deliver together', async () => {
  if (!world.database.url) {
    // The embedded PGlite belongs to one process: a second node cannot open it. Scale-out needs PostgreSQL.
    console.log('scale-out: embedded database, two nodes cannot share it; the refusal test below still runs');
    return;
  }
  const apiNode = await startChildDaemon({ ...world, env: { ...world.env, ROLE: 'api' } });
  // Two send threads on the worker node (SEND_THREADS): both claim from one queue, nothing twice, and
  // share the node's SMTP_MAX_CONNECTIONS (one each here) instead of opening that many each.
  const worker = startNode({ ROLE: 'worker', PORT: '0', SEND_THREADS: '2', SMTP_MAX_CONNECTIONS: '2' });
  try {
    await waitForLine(worker, /worker threads started/);
    assert.match(worker.output(), /"workers":\["send-worker","send-worker-2","background"\]/);
    const sends = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        api(world, 'POST', '/emails/send', {
          from: `news@${SENDING_DOMAIN}`,
          to: `node-${i}@example.test`,
          subject: `Scale ${i}`,
          textBody: 'across nodes',
        }),
      ),
    );
    for (const send of sends) assert.is(send.status, 202, JSON.stringify(send.body));
    await sink.waitForCount(24, 60_000);
    assert.is(sink.messages.length, 24, 'each send delivered once');
    assert.ok(sink.connections.peak <= 2, `the node opened ${sink.connections.peak} relay connections, its limit is 2`);
    for (let i = 0; i < 24; i += 1) {
      const message = sink.messages.find((m) => m.rcptTo.includes(`node-${i}@example.test`));
      assert.ok(message, `node-${i} was delivered`);
      // The worker node opened the DKIM key the seed sealed with the shared secret.
      assert.match(message.raw, new RegExp(`DKIM-Signature:[^]*d=${SENDING_DOMAIN.replace('.', '\\.')}`));
    }
    // Only the worker node runs threads; the API node never claimed the jobs.
    assert.not.match(apiNode.output(), /worker threads started/);
    // A third node with another secret, or with none (it would generate its own), refuses to boot.
    await expectRefusal({ ROLE: 'api', PORT: '0', JWT_SECRET: `another-secret-${'x'.repeat(32)}` });
    await expectRefusal({ ROLE: 'worker', PORT: '0', JWT_SECRET: undefined, DATA_DIR: spareDataDir() });
  } finally {
    worker.kill();
    assert.is(await worker.exit, 0, worker.output());
    assert.is(await stopChildDaemon(apiNode), 0);
  }
});

test('on any database, a node started with another secret after the first refuses with exit code 78', async () => {
  // The first node recorded its key-check value (above on PostgreSQL; here on the embedded database too).
  const first = await startChildDaemon(world);
  assert.is(await stopChildDaemon(first), 0);
  await expectRefusal({ JWT_SECRET: `yet-another-secret-${'y'.repeat(32)}` });
  // The right secret still boots.
  const again = await startChildDaemon(world);
  assert.is(await stopChildDaemon(again), 0);
});

test.run();
