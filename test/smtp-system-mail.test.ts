// System mail goes through the durable queue "system": captured without SMTP_URL, relayed with it,
// delayed (never lost) by a relay outage, refused in production from a sender that is not on a
// routable domain, and requested by forgot-password with the same statements whether or not the
// address has an account.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { simpleParser } from 'mailparser';
import { QueryTypes } from 'sequelize';
import pino from 'pino';
import { closeMailResources } from '../daemon/mail/resources.ts';
import { createMailResources } from '../daemon/modules/mail-resources.ts';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin } from './helpers/fixtures.ts';
import { sendSystemMail, latestCapturedMessageTo } from '../daemon/mail/system-mail.ts';
import { handleSystemMailJob } from '../daemon/mail/system-mail-job.ts';
import { claimJobs, completeJob, failJob, retryJob } from '../daemon/queue/index.ts';
import type { Config } from '../daemon/config.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { nothingWithin, waitFor } from './helpers/wait.ts';

let ctx: TestContext;
let sink: SmtpSink;
test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({ env: { AUTH_RATE_LIMIT_MAX: '1000' } });
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
});

const deps = () => ({ sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets });

/** One pass of a system worker with `config`: claim, run, record, as the queue loop does. */
async function runSystemWorker(config: Config = ctx.config): Promise<{ kind: string; error?: string }[]> {
  const jobs = await claimJobs(ctx.db.sequelize, 'system', 'test-worker', 20, 60_000);
  const outcomes: { kind: string; error?: string }[] = [];
  // A worker with this configuration: its own relay pools, closed when the pass is over.
  const mail = createMailResources(config, ctx.deps.secrets, ctx.db.sequelize);
  try {
    for (const job of jobs) {
      const outcome = await handleSystemMailJob(job, {
        config,
        secrets: ctx.deps.secrets,
        ...mail,
        sequelize: ctx.db.sequelize,
        sql: ctx.db.sql,
        log: pino({ level: 'silent' }),
        workerId: 'test-worker',
      });
      if (outcome.kind === 'done') await completeJob(ctx.db.sequelize, job.id, 'test-worker');
      else if (outcome.kind === 'retry') await retryJob(ctx.db.sequelize, job.id, 'test-worker', 0, outcome.error);
      else await failJob(ctx.db.sequelize, job.id, 'test-worker', outcome.error);
      outcomes.push(outcome.kind === 'done' ? { kind: 'done' } : { kind: outcome.kind, error: outcome.error });
    }
  } finally {
    await closeMailResources(mail);
  }
  return outcomes;
}

async function rows<T extends object>(sql: string, replacements: Record<string, unknown> = {}): Promise<T[]> {
  return ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
}

test('without SMTP_URL a queued system mail is captured whole; the job payload reveals nothing', async () => {
  await sendSystemMail(deps(), {
    to: 'Someone@Example.test',
    subject: 'Reset',
    html: '<p>Hi <b>there</b></p>',
    text: 'Hi there https://x.test/reset?token=abc',
    locale: 'es',
  });
  const [job] = await rows<{ payload: Record<string, unknown> }>(`SELECT payload FROM jobs WHERE queue = 'system'`);
  assert.not.match(JSON.stringify(job.payload), /token=abc|Someone|Reset/);
  assert.is(
    await latestCapturedMessageTo(ctx.db.sequelize, 'someone@example.test'),
    null,
    'nothing is sent before the worker runs',
  );
  assert.equal(await runSystemWorker(), [{ kind: 'done' }]);
  const captured = await latestCapturedMessageTo(ctx.db.sequelize, 'someone@example.test');
  assert.ok(captured);
  const parsed = await simpleParser(captured!.raw);
  assert.is(parsed.subject, 'Reset');
  // PUBLIC_URL is an IP here: the first-boot fallback sender is no-reply@localhost (development only).
  assert.match(String(parsed.messageId), /^<[0-9a-f-]{36}@localhost>$/);
  assert.is(parsed.text?.trim(), 'Hi there https://x.test/reset?token=abc');
  assert.is(parsed.headers.get('content-language'), 'es');
  assert.is(parsed.headers.get('auto-submitted'), 'auto-generated');
  assert.is(sink.messages.length, 0);
  const ready = (await ctx.app.inject({ method: 'GET', url: '/health/ready' })).json();
  assert.equal(
    ready.warnings.map((w: { code: string }) => w.code),
    ['SYSTEM_SENDER_NOT_ROUTABLE'],
  );
  assert.match(ready.warnings[0].message, 'svc <no-reply@localhost>');
  assert.match(ready.warnings[0].fix, 'SYSTEM_MAIL_FROM');
});

test('SYSTEM_MAIL_FROM is the sender until defaultFromAddress is set, which then wins', async () => {
  const config = {
    ...ctx.config,
    smtpUrl: `smtp://127.0.0.1:${sink.port}`,
    systemMailFrom: 'Acme Ops <ops@mail.acme-ops.com>',
  };
  await sendSystemMail(deps(), { to: 'first@example.test', subject: 'First', html: '<p>1</p>', text: '1' });
  assert.equal(await runSystemWorker(config), [{ kind: 'done' }]);
  const first = await sink.waitFor((m) => m.rcptTo.includes('first@example.test'));
  assert.is(first.parsed.from?.text, '"Acme Ops" <ops@mail.acme-ops.com>');
  assert.is(first.mailFrom, 'ops@mail.acme-ops.com');
  assert.match(String(first.parsed.messageId), /@mail\.acme-ops\.com>$/);

  await ctx.db.sequelize.query(
    `INSERT INTO platform_settings (key, value) VALUES ('defaultFromAddress', '"no-reply@platform-mail.com"')`,
  );
  try {
    await sendSystemMail(deps(), { to: 'second@example.test', subject: 'Second', html: '<p>2</p>', text: '2' });
    assert.equal(await runSystemWorker(config), [{ kind: 'done' }]);
    const second = await sink.waitFor((m) => m.rcptTo.includes('second@example.test'));
    assert.is(second.parsed.from?.text, '"svc" <no-reply@platform-mail.com>');
    assert.match(String(second.parsed.messageId), /@platform-mail\.com>$/);
  } finally {
    await ctx.db.sequelize.query(`DELETE FROM platform_settings WHERE key = 'defaultFromAddress'`);
  }
});

test('a relay outage delays system mail and never loses it; the Message-ID stays the same', async () => {
  const config = { ...ctx.config, smtpUrl: `smtp://127.0.0.1:${sink.port}` };
  sink.behaviour.onData = () => ({ code: 451, message: 'try again later' });
  try {
    await sendSystemMail(deps(), { to: 'outage@example.test', subject: 'Verify', html: '<p>v</p>', text: 'v' });
    const first = await runSystemWorker(config);
    assert.is(first[0].kind, 'retry');
    assert.match(first[0].error!, /try again later/);
    const [waiting] = await rows<{ attempts: number; last_error: string }>(
      `SELECT attempts, last_error FROM jobs WHERE queue = 'system'`,
    );
    assert.is(waiting.attempts, 1);
    assert.match(waiting.last_error, /try again later/);
  } finally {
    sink.behaviour.onData = undefined;
  }
  assert.equal(await runSystemWorker(config), [{ kind: 'done' }]);
  const received = await sink.waitFor((m) => m.rcptTo.includes('outage@example.test'));
  assert.is(received.parsed.subject, 'Verify');
  assert.is((await rows(`SELECT 1 FROM jobs WHERE queue = 'system'`)).length, 0);
  // A relay that cannot be reached at all is the same: the job waits.
  await sendSystemMail(deps(), { to: 'unreachable@example.test', subject: 'Later', html: '<p>l</p>', text: 'l' });
  const down = await runSystemWorker({ ...config, smtpUrl: 'smtp://127.0.0.1:1' });
  assert.is(down[0].kind, 'retry');
  assert.equal(await runSystemWorker(config), [{ kind: 'done' }]);
  await sink.waitFor((m) => m.rcptTo.includes('unreachable@example.test'));
});

test('in production a sender that is not on a routable domain is refused, with why and the fix', async () => {
  const production: Config = { ...ctx.config, nodeEnv: 'production', smtpUrl: `smtp://127.0.0.1:${sink.port}` };
  const before = sink.messages.length;
  await sendSystemMail(deps(), { to: 'prod@example.test', subject: 'Reset', html: '<p>r</p>', text: 'r' });
  const [outcome] = await runSystemWorker(production);
  assert.is(outcome.kind, 'fail');
  assert.match(
    outcome.error!,
    'system mail is not sent from no-reply@localhost: in production the sender must be on a routable domain',
  );
  assert.match(outcome.error!, 'defaultFromAddress');
  const [failed] = await rows<{ last_error: string }>(
    `SELECT last_error FROM failed_jobs WHERE queue = 'system' ORDER BY failed_at DESC LIMIT 1`,
  );
  assert.match(failed.last_error, 'routable');
  assert.is(sink.messages.length, before);
  assert.is(await latestCapturedMessageTo(ctx.db.sequelize, 'prod@example.test'), null);
});

test('forgot-password runs the same statements for a known and an unknown address; only the known one queues mail', async () => {
  const known = await createAdmin(ctx.app, { email: 'known@example.test' });
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'system'`);
  const wake = (sql: string) => sql.includes('pg_notify');
  const statementsOf = async (email: string, queues: boolean) => {
    const seen: string[] = [];
    const sequelize = ctx.db.sequelize as unknown as { options: { logging: unknown } };
    const previous = sequelize.options.logging;
    sequelize.options.logging = (sql: string) =>
      seen.push(
        sql
          .replace(/^Executing \([^)]*\): /, '')
          .replace(/'[^']*'/g, "'?'")
          .replace(/\b\d+(\.\d+)?\b/g, '0'),
      );
    try {
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/auth/forgot-password',
        headers: { 'accept-language': 'en' },
        payload: { email },
      });
      assert.is(res.statusCode, 200);
      assert.equal(res.json(), { ok: true });
      // The wake-up of the system worker is sent after the answer, off the request's path; for an unknown
      // address none may follow within 50 ms.
      if (queues) await waitFor('the wake-up of the system worker', () => seen.some(wake));
      else await nothingWithin(50);
    } finally {
      sequelize.options.logging = previous;
    }
    return seen;
  };
  const forUnknown = await statementsOf('nobody-here@example.test', false);
  const forKnown = await statementsOf(known.email, true);
  assert.ok(forUnknown.length > 0);
  assert.equal(
    forKnown.filter((sql) => !wake(sql)),
    forUnknown,
    'both answers run the same statements',
  );
  assert.not.ok(forUnknown.some(wake));
  const queued = await rows<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'system'`);
  assert.is(queued[0].n, 1, 'only the known address queued a mail');
  const tokens = await rows<{ admin_id: string }>(`SELECT admin_id FROM auth_tokens WHERE purpose = 'reset-password'`);
  assert.equal(
    tokens.map((t) => t.admin_id),
    [known.id],
  );
});

test.run();
