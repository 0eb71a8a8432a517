// `svc daemon start --role smtp` as a child process: only the SMTP edge runs (no HTTP listener, no
// worker threads), it generates a self-signed certificate into DATA_DIR and says so (and reuses it
// on the next boot), and a message submitted with swaks is accepted into the queue for the workers
// of another node.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { QueryTypes } from 'sequelize';
import { cleanEnv, startDaemonProcess, SVC_BIN } from './helpers/daemon-process.ts';
import { openWorldDatabase, seedSendWorld, type SendWorld } from './helpers/send-daemon.ts';
import { openSmtp, swaks } from './helpers/smtp-client.ts';
import { waitFor } from './helpers/wait.ts';

let world: SendWorld;
let smtpPort: number;
const children = new Set<ChildProcess>();

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test.before(async () => {
  smtpPort = await freePort();
  world = await seedSendWorld({
    ROLE: 'smtp',
    SMTP_SUBMISSION_PORT: String(smtpPort),
    SMTP_SUBMISSION_HOST: '127.0.0.1',
  });
});
test.after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await world?.database.drop();
});

/** Boots the daemon and resolves once the submission listener logged; stop() sends SIGTERM and resolves with the exit code. */
async function boot(): Promise<{ output(): string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [SVC_BIN, 'daemon', 'start', '--role', 'smtp'], {
    env: { ...cleanEnv(), ...world.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no SMTP listener within 90 s:\n${output}`)), 90_000);
    const look = () => {
      if (output.includes(`SMTP submission listening on 127.0.0.1:${smtpPort}`)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', look);
    void exit.then((code) => reject(new Error(`the daemon exited with ${code} before listening:\n${output}`)));
  });
  return {
    output: () => output,
    stop: () => {
      child.kill('SIGTERM');
      return exit;
    },
  };
}

test('--role smtp runs the SMTP edge alone, generates its certificate once, and queues what it accepts', async () => {
  const first = await boot();
  let id: string | undefined;
  try {
    assert.match(first.output(), /generated a self-signed certificate for SMTP TLS/);
    assert.ok(first.output().includes(join(world.env.DATA_DIR, 'smtp-tls')), first.output());
    assert.not.match(first.output(), /Server listening at/);
    assert.not.match(first.output(), /worker threads started/);
    const http = await fetch(`${world.url}/health`).then(
      (res) => `answered ${res.status}`,
      (error: Error) => `refused (${error.message})`,
    );
    assert.match(http, /^refused/, 'no HTTP listener on PORT');

    const sent = await swaks([
      '--server',
      `127.0.0.1:${smtpPort}`,
      '--tls',
      '--auth',
      'LOGIN',
      '--auth-user',
      'svc',
      '--auth-password',
      world.apiKey,
      '--from',
      'app@acme.test',
      '--to',
      'reader@example.test',
      '--header',
      'Subject: Through the smtp role',
      '--header',
      'From: App <app@acme.test>',
    ]);
    assert.is(sent.exitCode, 0, sent.output);
    id = /250 2\.6\.0 Ok: queued as ([0-9a-f-]{36})/.exec(sent.output)?.[1];
    assert.ok(id, sent.output);
  } finally {
    assert.is(await first.stop(), 0);
  }
  const cert = readFileSync(join(world.env.DATA_DIR, 'smtp-tls', 'cert.pem'), 'utf8');
  assert.match(cert, /^-----BEGIN CERTIFICATE-----/);

  const second = await boot();
  try {
    assert.not.match(second.output(), /generated a self-signed certificate/);
    // One exchange before SIGTERM: the daemon installs its signal handlers just after it logs listening.
    const probe = await openSmtp(smtpPort);
    assert.match(probe.greeting.text, /ESMTP svc submission/);
    assert.is((await probe.command('QUIT')).code, 221);
    probe.close();
  } finally {
    assert.is(await second.stop(), 0, second.output());
  }
  assert.is(readFileSync(join(world.env.DATA_DIR, 'smtp-tls', 'cert.pem'), 'utf8'), cert, 'the stored pair is reused');

  const db = await openWorldDatabase(world);
  try {
    const rows = await db.sequelize.query<{ status: string; subject: string; jobs: number }>(
      `SELECT status, subject, (SELECT count(*)::int FROM jobs WHERE queue = 'send' AND key = 'email:' || l.id) AS jobs
         FROM email_logs l WHERE id = :id`,
      { replacements: { id }, type: QueryTypes.SELECT },
    );
    assert.equal(
      rows,
      [{ status: 'QUEUED', subject: 'Through the smtp role', jobs: 1 }],
      'accepted, waiting for a worker node',
    );
  } finally {
    await db.close();
  }
});

test('--role all runs the API and the SMTP edge together', async () => {
  const daemon = await startDaemonProcess({ ...world.env, ROLE: 'all' });
  try {
    // "Server listening" comes first; the SMTP edge, then the worker threads (the last step of boot) follow.
    await waitFor('the worker threads to start', () => /worker threads started/.test(daemon.output()), {
      timeoutMs: 60_000,
      intervalMs: 100,
      details: daemon.output,
    });
    assert.ok(daemon.output().includes(`SMTP submission listening on 127.0.0.1:${smtpPort}`), daemon.output());
    const probe = await openSmtp(smtpPort);
    assert.match(probe.greeting.text, /ESMTP svc submission/);
    probe.close();
    assert.is((await fetch(`${daemon.url}/health`)).status, 200);
  } finally {
    daemon.child.kill('SIGTERM');
  }
  assert.is(await daemon.exit, 0, daemon.output());
});

test('--role smtp without an SMTP port stops at boot with the sentence (exit 78)', async () => {
  const child = spawn(process.execPath, [SVC_BIN, 'daemon', 'start', '--role', 'smtp'], {
    env: { ...cleanEnv(), ...world.env, SMTP_SUBMISSION_PORT: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  children.delete(child);
  assert.is(code, 78, output);
  assert.match(
    output,
    /Configuration: ROLE: role smtp runs only the SMTP edge, and no SMTP listener is configured: set SMTP_SUBMISSION_PORT/,
  );
});

test.run();
