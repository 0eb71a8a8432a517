// What an operator sees before the first boot and when the relay fails: `svc doctor --local` on an
// unmigrated database says migrations are pending and how to run them; the platform-sender check
// names the domain to verify; a relay with a self-signed certificate is reported as an untrusted
// certificate with NODE_EXTRA_CA_CERTS as the fix; a system mail the relay refuses is logged at warn
// with its job and error.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { createTestContext, createTestDatabase, type TestContext } from './helpers/context.ts';
import { InProcessCli } from './helpers/svc-inprocess.ts';
import { makeSelfSignedPair } from './helpers/certificates.ts';
import { handleSystemMailJob } from '../daemon/mail/system-mail-job.ts';
import { sendSystemMail } from '../daemon/mail/system-mail.ts';
import { closeMailResources } from '../daemon/mail/resources.ts';
import { createMailResources } from '../daemon/modules/mail-resources.ts';
import { claimJobs } from '../daemon/queue/index.ts';
import { loadConfig } from '../daemon/config.ts';

const dir = mkdtempSync(join(tmpdir(), 'svc-operator-relay-'));
const pair = makeSelfSignedPair(dir, 'relay', '127.0.0.1', 'IP:127.0.0.1');

/** An SMTP relay that offers STARTTLS with a self-signed certificate (`port`), and a closed port. */
const relay = new SMTPServer({
  key: readFileSync(pair.key),
  cert: readFileSync(pair.cert),
  authOptional: true,
  logger: false,
  onData(stream, _session, callback) {
    stream.resume();
    stream.on('end', () => callback());
  },
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
const relayPort = (relay.server.address() as { port: number }).port;

/** A relay that refuses every recipient for good (550), without TLS. */
const refusingRelay = new SMTPServer({
  disabledCommands: ['STARTTLS'],
  authOptional: true,
  logger: false,
  onRcptTo(_address, _session, callback) {
    callback(Object.assign(new Error('5.7.1 relaying denied'), { responseCode: 550 }));
  },
});
await new Promise<void>((resolve) => refusingRelay.listen(0, '127.0.0.1', resolve));
const refusingPort = (refusingRelay.server.address() as { port: number }).port;

test.after(async () => {
  await new Promise<void>((resolve) => relay.close(() => resolve()));
  await new Promise<void>((resolve) => refusingRelay.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** `svc doctor --local` and `svc db migrate` run in this process: they read the daemon's environment and
 * talk to no daemon, so no operation is known here and any request one of them made would fail the run.
 * The one run with NODE_EXTRA_CA_CERTS stays a child: Node reads that variable only when a process starts. */
const cli = new InProcessCli('http://127.0.0.1:9', []);
/** One migrated database for the last two tests (migrating one takes seconds); the first needs its own,
 * unmigrated. */
let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  cli.cleanup();
  await ctx?.close();
});

const byName = (checks: { name: string; ok: boolean; message: string; fix?: string }[]) =>
  Object.fromEntries(checks.map((check) => [check.name, check]));

test('svc doctor --local before the first boot: migrations are pending, and how to run them', async () => {
  const database = await createTestDatabase();
  try {
    if (!database.url) return; // --local needs DATABASE_URL by design (operator.test.ts asserts the refusal)
    const run = await cli.run(['doctor', '--local', '--json'], {
      env: { DATABASE_URL: database.url, DATA_DIR: database.dataDir, JWT_SECRET: 'x'.repeat(40), REDIS_URL: '' },
    });
    assert.is(run.code, 1, run.stdout + run.stderr);
    const checks = byName(run.json.checks);
    assert.is(checks.migrations.ok, false);
    assert.match(checks.migrations.message, /^\d+ migration\(s\) pending: 0001-core, /);
    assert.match(checks.migrations.fix!, /svc db migrate/);
    for (const name of ['secret', 'platform-sender', 'queues']) {
      assert.is(checks[name].ok, false, name);
      assert.match(
        checks[name].message,
        /^Not checked: migrations are pending \(the table \w+ does not exist yet\)\.$/,
      );
      assert.match(checks[name].fix!, /svc db migrate/);
    }
    assert.not.match(run.stdout, /Check that the database answers/);

    const human = await cli.run(['doctor', '--local'], {
      env: { DATABASE_URL: database.url, DATA_DIR: database.dataDir, JWT_SECRET: 'x'.repeat(40), REDIS_URL: '' },
    });
    assert.match(human.stdout, /✗ migrations\s+\d+ migration\(s\) pending/);
    assert.match(human.stdout, /fix: Run the migrations once with this environment: svc db migrate/);

    const migrate = await cli.run(['db', 'migrate', '--json'], {
      env: { DATABASE_URL: database.url, DATA_DIR: database.dataDir },
    });
    assert.is(migrate.code, 0, migrate.stdout + migrate.stderr);
    const after = await cli.run(['doctor', '--local', '--json'], {
      env: { DATABASE_URL: database.url, DATA_DIR: database.dataDir, JWT_SECRET: 'x'.repeat(40), REDIS_URL: '' },
    });
    const migrated = byName(after.json.checks);
    assert.is(migrated.migrations.ok, true, migrated.migrations.message);
    assert.is(migrated.secret.ok, true, migrated.secret.message);
  } finally {
    await database.drop();
  }
});

test('svc doctor --local names the platform sender domain to verify, and says an untrusted relay certificate needs NODE_EXTRA_CA_CERTS', async () => {
  try {
    if (!ctx.config.databaseUrl) return;
    await ctx.db.sequelize.query(
      `INSERT INTO platform_settings (key, value) VALUES ('defaultFromAddress', '"no-reply@mail.example.com"')`,
    );
    const env = {
      DATABASE_URL: ctx.databaseUrl,
      DATA_DIR: ctx.dataDir,
      JWT_SECRET: 'x'.repeat(40),
      REDIS_URL: '',
      SMTP_URL: `smtp://127.0.0.1:${relayPort}`,
    };
    const run = await cli.run(['doctor', '--local', '--json'], { env });
    assert.is(run.code, 1, run.stdout + run.stderr);
    const checks = byName(run.json.checks);
    const sender = checks['platform-sender'];
    assert.is(sender.ok, false);
    assert.match(
      sender.message,
      /no-reply@mail\.example\.com>? \(setting\) but is not DKIM-signed: its domain mail\.example\.com is not verified/,
    );
    assert.match(sender.fix!, /svc domains add mail\.example\.com/);
    assert.match(sender.fix!, /svc domains verify mail\.example\.com/);

    assert.is(checks.relay.ok, false);
    assert.match(
      checks.relay.message,
      new RegExp(`The relay 127\\.0\\.0\\.1:${relayPort} did not complete STARTTLS: .*DEPTH_ZERO_SELF_SIGNED_CERT`),
    );
    assert.match(checks.relay.message, /untrusted certificate: set NODE_EXTRA_CA_CERTS/);
    assert.match(checks.relay.fix!, /^untrusted certificate: set NODE_EXTRA_CA_CERTS/);

    // The fix works: the same check with the relay's certificate trusted passes.
    const trusted = await cli.spawn(['doctor', '--local', '--json'], {
      env: { ...env, NODE_EXTRA_CA_CERTS: pair.cert },
    });
    const relayCheck = byName(trusted.json.checks).relay;
    assert.is(relayCheck.ok, true, relayCheck.message);
    assert.match(relayCheck.message, new RegExp(`The relay 127\\.0\\.0\\.1:${relayPort} answered EHLO`));
  } finally {
    // The next test's system mail goes out with the default sender, as on a database of its own.
    await ctx.db.sequelize.query(`DELETE FROM platform_settings WHERE key = 'defaultFromAddress'`);
  }
});

test('a system mail the relay refuses, or whose relay certificate is untrusted, is logged at warn with its job and error', async () => {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        callback();
      },
    }),
  );
  /** One delivery attempt of the queued system mail with the relay at `smtpUrl`, as a worker makes it. */
  async function attempt(smtpUrl: string) {
    const config = loadConfig({ ...process.env, NODE_ENV: 'test', DATA_DIR: ctx.dataDir, SMTP_URL: smtpUrl });
    const [job] = await claimJobs(ctx.db.sequelize, 'system', 'test-worker', 1, 60_000);
    const mail = createMailResources(config, ctx.deps.secrets, ctx.db.sequelize);
    try {
      const outcome = await handleSystemMailJob(job, {
        config,
        secrets: ctx.deps.secrets,
        ...mail,
        sequelize: ctx.db.sequelize,
        sql: ctx.db.sql,
        log,
        workerId: 'test-worker',
      });
      return { job, outcome };
    } finally {
      await closeMailResources(mail);
    }
  }
  const deps = { sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets };
  await sendSystemMail(deps, { to: 'a@example.org', subject: 'Reset', html: '<p>x</p>', text: 'x' });

  // Nothing listens on port 9 of loopback: the relay refuses the connection.
  const refused = await attempt('smtp://127.0.0.1:9');
  assert.is(refused.outcome.kind, 'retry');
  const refusedLine = lines.find((line) => line.job === refused.job.id);
  assert.ok(refusedLine, JSON.stringify(lines));
  assert.is(refusedLine.level, 40);
  assert.is(refusedLine.msg, 'system mail not delivered: the relay failed; retrying');
  assert.match(String(refusedLine.err), /ECONNREFUSED/);
  assert.is(refusedLine.attempt, 1);

  await ctx.db.sequelize.query(
    `UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = now() WHERE queue = 'system'`,
  );
  lines.length = 0;
  const untrusted = await attempt(`smtp://127.0.0.1:${relayPort}`);
  assert.is(untrusted.outcome.kind, 'retry');
  const untrustedLine = lines.find((line) => line.job === untrusted.job.id);
  assert.ok(untrustedLine, JSON.stringify(lines));
  assert.is(untrustedLine.level, 40);
  assert.match(String(untrustedLine.err), /self-signed certificate/);
  assert.is(untrustedLine.tlsError, 'DEPTH_ZERO_SELF_SIGNED_CERT');
  assert.match(String(untrustedLine.fix), /^untrusted certificate: set NODE_EXTRA_CA_CERTS/);

  // A relay that answers 550: the job fails for good, and the warn line says so with the relay's answer.
  await ctx.db.sequelize.query(
    `UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = now() WHERE queue = 'system'`,
  );
  const denied = await attempt(`smtp://127.0.0.1:${refusingPort}`);
  assert.is(denied.outcome.kind, 'fail');
  const deniedLine = lines.find((line) => line.job === denied.job.id && line.responseCode === 550);
  assert.ok(deniedLine, JSON.stringify(lines));
  assert.is(deniedLine.level, 40);
  assert.is(deniedLine.msg, 'system mail not delivered: the relay refused it for good');
  assert.match(String(deniedLine.err), /relaying denied/);
  assert.not.match(JSON.stringify(lines), /Reset|a@example\.org/, 'the mail itself is not logged');
});

test.run();
