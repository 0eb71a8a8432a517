// For the operator: HTTPS (and HTTP/2) on the API with a certificate reloaded on SIGHUP, a CLI that
// never sends credentials in clear to another machine and trusts private CAs only when told, and
// `svc doctor` against a misconfigured and a correct deployment.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { createTestContext, createTestDatabase, type TestContext } from './helpers/context.ts';
import { killDaemonProcesses, startDaemonProcess } from './helpers/daemon-process.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { addVerifiedDomain, createAdmin, createTenant } from './helpers/fixtures.ts';
import { startSmtpSink } from './helpers/smtp-sink.ts';
import { makeSelfSignedPair, type CertificateFiles } from './helpers/certificates.ts';
import { nothingWithin, waitFor } from './helpers/wait.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-operator-'));

/** The operations of /openapi.json, for the in-process CLI's check that each command calls only those it
 * declares; read once from a test daemon, since the first test's daemon is a child process on HTTPS. */
let operations: Promise<ReturnType<typeof operationMatchers>> | undefined;
function matchers() {
  operations ??= (async () => {
    const ctx = await createTestContext();
    try {
      return operationMatchers((await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json());
    } finally {
      await ctx.close();
    }
  })();
  return operations;
}

/** A self-signed pair for 127.0.0.1. */
function makeCertificate(name: string): CertificateFiles {
  return makeSelfSignedPair(dir, name, '127.0.0.1', 'IP:127.0.0.1,DNS:localhost');
}

function servedFingerprint(url: string, ca: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: hostname, port: Number(port), ca: readFileSync(ca), servername: 'localhost' },
      () => {
        const peer = socket.getPeerCertificate() as PeerCertificate;
        socket.end();
        resolve(peer.fingerprint256);
      },
    );
    socket.on('error', reject);
  });
}

// Before any test makes its own context: two at once in this process would share the models.
test.before(async () => void (await matchers()));
test.after(() => {
  killDaemonProcesses();
  rmSync(dir, { recursive: true, force: true });
});

test('HTTPS with HTTP/2: svc trusts the daemon with --ca, explains an untrusted one, and SIGHUP swaps the certificate without dropping connections', async () => {
  const first = makeCertificate('first');
  const second = makeCertificate('second');
  const live = { cert: join(dir, 'live.crt'), key: join(dir, 'live.key') };
  copyFileSync(first.cert, live.cert);
  copyFileSync(first.key, live.key);
  const database = await createTestDatabase({ migrated: true });
  const daemon = await startDaemonProcess(
    {
      DATA_DIR: database.dataDir,
      TLS_CERT: live.cert,
      TLS_KEY: live.key,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    },
    ['--role', 'api'],
  );
  try {
    assert.match(daemon.url, /^https:\/\/127\.0\.0\.1:\d+$/);

    // HTTP/2 when the client offers it (ALPN h2); the session stays open across the reload below.
    const session = http2Connect(daemon.url, { ca: readFileSync(first.cert) });
    const get = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const stream = session.request({ ':path': path });
        let status = 0;
        let body = '';
        stream.on('response', (headers) => (status = Number(headers[':status'])));
        stream.on('data', (chunk) => (body += chunk));
        stream.on('end', () => resolve({ status, body }));
        stream.on('error', reject);
      });
    const before = await get('/health');
    assert.is(before.status, 200);
    assert.is(JSON.parse(before.body).status, 'ok');
    assert.is(session.alpnProtocol, 'h2');

    const cli = new InProcessCli(daemon.url, await matchers());
    const trusted = await cli.run(['daemon', 'status', '--json', '--ca', first.cert]);
    assert.is(trusted.code, 0, trusted.stdout + trusted.stderr);
    assert.is(trusted.json.ready.status, 'ready');

    // Credentials over TLS: the key reaches the daemon (and is refused there: 401 → exit 3).
    const withKey = await cli.run(['logs', 'list', '--json'], {
      env: { SVC_API_KEY: 'svc_live_notarealkeyatall0000000000', SVC_CA_FILE: first.cert },
    });
    assert.is(withKey.code, 3, withKey.stdout + withKey.stderr);

    const untrusted = await cli.run(['daemon', 'status', '--json']);
    assert.is(untrusted.code, 4);
    assert.is(untrusted.json.error.code, 'UNTRUSTED_CERTIFICATE');
    assert.match(
      untrusted.json.error.message,
      /not trusted: its certificate is self-signed \(DEPTH_ZERO_SELF_SIGNED_CERT\); trust its CA with --ca/,
    );
    assert.not.match(untrusted.stdout + untrusted.stderr, /at .*\.js:\d+/, 'a sentence, not a stack');

    // Renewal in place, then SIGHUP: new connections get the new certificate, the open session goes on.
    copyFileSync(second.cert, live.cert);
    copyFileSync(second.key, live.key);
    daemon.child.kill('SIGHUP');
    await waitFor('the TLS certificate reload', () => /TLS certificate reloaded/.test(daemon.output()), {
      timeoutMs: 10_000,
      details: daemon.output,
    });
    assert.is(await servedFingerprint(daemon.url, second.cert), second.fingerprint);
    const after = await get('/health');
    assert.is(after.status, 200, 'the HTTP/2 session opened before the reload still works');
    session.close();

    // A broken pair on SIGHUP keeps the old one and says so.
    copyFileSync(first.key, live.key);
    daemon.child.kill('SIGHUP');
    await waitFor('the failed TLS reload', () => /TLS reload failed/.test(daemon.output()), {
      timeoutMs: 10_000,
      details: daemon.output,
    });
    assert.match(daemon.output(), /TLS reload failed: still serving the previous certificate/);
    assert.is(await servedFingerprint(daemon.url, second.cert), second.fingerprint);

    daemon.child.kill('SIGTERM');
    assert.is(await daemon.exit, 0, daemon.output());
  } finally {
    await database.drop();
  }
});

test('a TLS_CERT without TLS_KEY, or a key that does not fit, stops boot with a sentence', async () => {
  const pair = makeCertificate('lonely');
  const other = makeCertificate('other');
  const database = await createTestDatabase();
  try {
    const half = await startDaemonProcess({ DATA_DIR: database.dataDir, TLS_CERT: pair.cert }).catch(
      (error: Error) => error.message,
    );
    assert.match(String(half), /TLS_KEY: TLS_CERT and TLS_KEY go together/);
    const mismatched = await startDaemonProcess({
      DATA_DIR: database.dataDir,
      TLS_CERT: pair.cert,
      TLS_KEY: other.key,
      ...(database.url ? { DATABASE_URL: database.url } : {}),
    }).catch((error: Error) => error.message);
    assert.match(String(mismatched), /TLS_KEY: the key does not fit the certificate/);
  } finally {
    await database.drop();
  }
});

test('svc refuses to send credentials over http:// to a non-loopback host before opening a connection; --insecure warns', async () => {
  let connections = 0;
  const listener = createServer((socket) => {
    connections++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as { port: number }).port;
  // 0.0.0.0 is not a loopback address by name, yet a connection to it would reach this listener.
  const cli = new InProcessCli(`http://0.0.0.0:${port}`, await matchers());
  const key = 'svc_live_secretkeythatmustnotleak000000000';
  try {
    const refused = await cli.run(['logs', 'list', '--json'], { env: { SVC_API_KEY: key } });
    assert.is(refused.code, 2, refused.stdout + refused.stderr);
    assert.is(refused.json.error.code, 'INSECURE_TRANSPORT');
    assert.match(
      refused.json.error.message,
      /Refusing to send credentials in clear text to http:\/\/0\.0\.0\.0:\d+: use https:\/\//,
    );
    assert.not.ok((refused.stdout + refused.stderr).includes(key), 'the key is never printed');
    await nothingWithin(200); // no connection to the plain-HTTP daemon
    assert.is(connections, 0, 'nothing was sent');

    // A credential-free request (the readiness check) may go.
    await cli.run(['daemon', 'status', '--json']);
    assert.is(connections, 1);

    const insecure = await cli.run(['logs', 'list', '--json', '--insecure'], { env: { SVC_API_KEY: key } });
    assert.match(insecure.stderr, /Warning: --insecure: credentials are being sent in clear text/);
    assert.is(connections, 2, 'with --insecure the request goes');
    const viaEnv = await cli.run(['logs', 'list', '--json'], { env: { SVC_API_KEY: key, SVC_INSECURE: '1' } });
    assert.match(viaEnv.stderr, /Warning: --insecure/);
    assert.is(connections, 3);

    const loopback = new InProcessCli(`http://127.0.0.1:${port}`, await matchers());
    await loopback.run(['logs', 'list', '--json'], { env: { SVC_API_KEY: key } });
    assert.is(connections, 4, 'loopback over http is fine');
  } finally {
    listener.close();
    cli.cleanup();
  }
});

async function doctorAs(ctx: TestContext, args: string[] = []) {
  const url = await listen(ctx);
  const admin = await createAdmin(ctx.app, { platformAdmin: true });
  const cli = new InProcessCli(url, await matchers());
  cli.writeProfile({ accessToken: admin.token, refreshToken: 'unused' });
  const run = await cli.run(['doctor', '--json', ...args]);
  cli.cleanup();
  return { run, admin, url };
}

const byName = (checks: { name: string; ok: boolean; message: string; fix?: string }[]) =>
  Object.fromEntries(checks.map((check) => [check.name, check]));

test('svc doctor against a misconfigured daemon: one line per check with the fix, exit 1', async () => {
  const ctx = await createTestContext({
    env: { NODE_ENV: 'production', PUBLIC_URL: 'http://127.0.0.1:3000', SMTP_URL: 'smtp://127.0.0.1:1', REDIS_URL: '' },
  });
  try {
    // Two nodes seen on this database, and no Redis.
    await ctx.db.sequelize.query(
      `INSERT INTO daemon_nodes (id, hostname, pid, role, redis) VALUES ('a:1', 'a', 1, 'all', false), ('b:2', 'b', 2, 'all', false)`,
    );
    const { run } = await doctorAs(ctx);
    assert.is(run.code, 1, run.stdout + run.stderr);
    assert.is(run.json.ok, false);
    const checks = byName(run.json.checks);
    assert.equal(Object.keys(checks), [
      'secret',
      'public-url',
      'relay',
      'platform-sender',
      'redis',
      'migrations',
      'queues',
      'disk',
      'event-loop',
      'metrics',
      'ip-pools',
      'pool-bind',
    ]);
    assert.is(checks.secret.ok, false);
    assert.match(checks.secret.fix!, /Set JWT_SECRET to the same value on every node/);
    assert.is(checks['public-url'].ok, false);
    assert.match(checks['public-url'].message, /links in mail .* would travel in clear/);
    assert.is(checks.relay.ok, false);
    assert.match(checks.relay.message, /The relay 127\.0\.0\.1:1 did not complete EHLO\/STARTTLS\/AUTH/);
    assert.is(checks['platform-sender'].ok, false);
    assert.match(checks['platform-sender'].message, /not on a routable domain/);
    assert.is(checks.redis.ok, false);
    assert.match(checks.redis.message, /2 nodes share this database without Redis/);
    assert.is(checks.migrations.ok, true);
    assert.is(checks.queues.ok, true);

    const human = await (async () => {
      const cli = new InProcessCli(
        await listen(ctx).catch(() => `http://127.0.0.1:${(ctx.app.server.address() as { port: number }).port}`),
        await matchers(),
      );
      cli.writeProfile({
        accessToken: (await createAdmin(ctx.app, { platformAdmin: true })).token,
        refreshToken: 'unused',
      });
      const out = await cli.run(['doctor']);
      cli.cleanup();
      return out;
    })();
    assert.is(human.code, 1);
    assert.match(human.stdout, /✗ relay\s+The relay 127\.0\.0\.1:1/);
    assert.match(human.stdout, /fix: Check SMTP_URL/);
    assert.match(human.stdout, /✓ migrations\s+Every migration is applied\./);
  } finally {
    await ctx.close();
  }
});

test('svc doctor against a correct deployment: every check passes, exit 0; only platform admins may ask', async () => {
  const sink = await startSmtpSink();
  const ctx = await createTestContext({
    env: {
      NODE_ENV: 'production',
      PUBLIC_URL: 'https://mail.example.com',
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      JWT_SECRET: 'a-shared-secret-that-is-long-enough-0123456789',
    },
  });
  try {
    const owner = await createAdmin(ctx.app);
    const platformAdmin = await createAdmin(ctx.app, { platformAdmin: true });
    const tenantId = await createTenant(platformAdmin.id, 'Platform');
    await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, tenantId, 'mail.example.com');
    await ctx.db.sequelize.query(
      `INSERT INTO platform_settings (key, value) VALUES ('defaultFromAddress', '"no-reply@mail.example.com"')`,
    );
    const { run, url } = await doctorAs(ctx);
    assert.is(run.code, 0, run.stdout + run.stderr);
    assert.is(run.json.ok, true, JSON.stringify(run.json.checks, null, 2));
    const checks = byName(run.json.checks);
    assert.match(checks.relay.message, new RegExp(`The relay 127\\.0\\.0\\.1:${sink.port} answered EHLO`));
    assert.match(
      checks['platform-sender'].message,
      /System mail goes from .*no-reply@mail\.example\.com.*, DKIM-signed by mail\.example\.com/,
    );

    const notAdmin = await fetch(`${url}/platform/doctor`, { headers: { authorization: `Bearer ${owner.token}` } });
    assert.is(notAdmin.status, 403);
    assert.is(((await notAdmin.json()) as { code: string }).code, 'PLATFORM_ADMIN_REQUIRED');
  } finally {
    await ctx.close();
    await sink.close();
  }
});

test('svc doctor --local runs the checks from the daemon environment without a daemon', async () => {
  const ctx = await createTestContext();
  try {
    if (!ctx.config.databaseUrl) return; // --local needs DATABASE_URL by design (asserted below otherwise)
    const cli = new InProcessCli('http://127.0.0.1:9', await matchers());
    const run = await cli.run(['doctor', '--local', '--json'], {
      env: {
        DATABASE_URL: ctx.databaseUrl,
        DATA_DIR: ctx.dataDir,
        NODE_ENV: 'production',
        PUBLIC_URL: 'https://mail.example.com',
        JWT_SECRET: 'x'.repeat(40),
        REDIS_URL: process.env.REDIS_URL,
      },
    });
    assert.is(run.code, 1, run.stdout + run.stderr);
    const checks = byName(run.json.checks);
    assert.is(checks.secret.ok, true);
    assert.is(checks['public-url'].ok, true);
    assert.is(checks.relay.ok, false, 'no SMTP_URL in production');
    assert.match(checks.relay.message, /mail is captured and nothing leaves this machine/);
    assert.is(checks.migrations.ok, true);

    // A database first set up with another secret: this node's JWT_SECRET does not match its key check.
    await ctx.db.sequelize.query(
      `INSERT INTO platform_secrets_check (id, check_value) VALUES (1, 'another-secret-check') ON CONFLICT (id) DO UPDATE SET check_value = EXCLUDED.check_value`,
    );
    const mismatched = await cli.run(['doctor', '--local', '--json'], {
      env: { DATABASE_URL: ctx.databaseUrl, DATA_DIR: ctx.dataDir, JWT_SECRET: 'x'.repeat(40) },
    });
    const secret = byName(mismatched.json.checks).secret;
    assert.is(secret.ok, false);
    assert.match(secret.message, /JWT_SECRET does not match the database/);

    const embedded = await cli.run(['doctor', '--local', '--json'], {
      env: { DATABASE_URL: '', DATA_DIR: ctx.dataDir },
    });
    assert.is(embedded.code, 2);
    assert.is(embedded.json.error.code, 'NO_DATABASE_URL');
    cli.cleanup();
  } finally {
    await ctx.close();
  }
});

test.run();
