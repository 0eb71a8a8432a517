// The daemon as a person sees it in a terminal: readable log lines in a TTY (JSON otherwise), health
// polls at debug, no Fastify warning at boot, and a port in use refused at once, before the database.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { Writable } from 'node:stream';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { buildApp, REDACTED_LOG_PATHS } from '../daemon/app.ts';
import { createDaemonLogger } from '../daemon/logging.ts';

const ROOT = new URL('..', import.meta.url).pathname;
let ctx: TestContext;

test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  await ctx?.close();
});

function sink(isTTY: boolean): { stream: Writable & { isTTY?: boolean }; text: () => string } {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += chunk;
      done();
    },
  }) as Writable & { isTTY?: boolean };
  stream.isTTY = isTTY;
  return { stream, text: () => text };
}

test('a terminal gets readable lines, anything else JSON lines; secrets are redacted in both', () => {
  const tty = sink(true);
  createDaemonLogger({ level: 'info', redact: REDACTED_LOG_PATHS }, tty.stream).info(
    { password: 'hunter2-secret' },
    'database connected',
  );
  assert.match(tty.text(), 'database connected');
  assert.match(tty.text(), 'INFO');
  assert.not.match(tty.text(), '{"level"');
  assert.not.match(tty.text(), 'hunter2-secret');
  const file = sink(false);
  createDaemonLogger({ level: 'info', redact: REDACTED_LOG_PATHS }, file.stream).info(
    { password: 'hunter2-secret' },
    'database connected',
  );
  const line = JSON.parse(file.text());
  assert.is(line.msg, 'database connected');
  assert.is(line.password, '[Redacted]');
});

test('health polls are not logged at info, only at debug; other requests are; no FastifyWarning at boot', async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  for (const level of ['info', 'debug']) {
    const out = sink(false);
    const app = await buildApp(ctx.deps, {
      loggerInstance: createDaemonLogger({ level, redact: REDACTED_LOG_PATHS }, out.stream),
    });
    await app.inject({ method: 'GET', url: '/health/ready' });
    await app.inject({ method: 'GET', url: '/health/live' });
    await app.inject({ method: 'GET', url: '/auth/registration-status' });
    await app.close();
    const lines = out
      .text()
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text));
    const about = (url: string) => lines.filter((line) => line.req?.url === url || line.url === url);
    assert.ok(about('/auth/registration-status').length >= 1, 'an ordinary request is logged');
    if (level === 'info') assert.equal(about('/health/ready'), [], 'no info line for a health poll');
    else {
      const polls = about('/health/ready');
      assert.is(polls.length, 1, JSON.stringify(lines));
      assert.is(polls[0].msg, 'health poll');
      assert.is(polls[0].level, 20);
    }
  }
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
  assert.equal(
    warnings.filter((warning) => /Fastify/.test(warning)),
    [],
  );
});

test('a port in use stops `svc daemon start` at once with a sentence, before the database is opened', async () => {
  const blocker: Server = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  const run = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [
        'bin/svc.js',
        'daemon',
        'start',
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--database-url',
        'postgres://postgres@127.0.0.1:1/unreachable',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: '1', LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, output: `${output}${signal ? ` (signal ${signal})` : ''}` });
    });
  });
  blocker.close();
  assert.is(run.code, 1, `exit ${run.code}: ${run.output}`);
  assert.match(run.output, `Port ${port} on 127.0.0.1 is already in use`);
  assert.not.match(run.output, 'ECONNREFUSED', 'the database was never tried');
  assert.not.match(run.output, 'migrations');
});

test.run();
