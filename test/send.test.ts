// The send pipeline end to end through a real SMTP server: accept, deliver (the job handler),
// what arrives (headers, bodies, tracking, List-Unsubscribe, attachments), sync, capture, logs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createApiKey, createWorld } from './helpers/fixtures.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { handleSendJob } from '../daemon/modules/emails/send-job.ts';
import type { JobRow } from '../daemon/queue/types.ts';
import { workerContext } from './helpers/send-jobs.ts';

let ctx: TestContext;
let sink: SmtpSink;
let world: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({
    env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}`, PUBLIC_URL: 'http://mail.example.test' },
  });
  world = await createWorld(ctx.app);
  // Relayed mail must come from a verified domain.
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId);
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
});

/** Runs the send jobs waiting in the queue, as a worker would, and returns their outcomes. */
async function runSendJobs(): Promise<string[]> {
  const jobs = await ctx.db.sequelize.query<{
    id: string;
    payload: Record<string, unknown>;
    attempts: number;
    max_attempts: number;
    tenant_id: string;
  }>(`DELETE FROM jobs WHERE queue = 'send' RETURNING id::text, payload, attempts, max_attempts, tenant_id`, {
    type: QueryTypes.SELECT,
  });
  const outcomes: string[] = [];
  for (const job of jobs) {
    const row: JobRow = {
      id: job.id,
      queue: 'send',
      tenantId: job.tenant_id,
      payload: job.payload,
      attempts: job.attempts,
      maxAttempts: job.max_attempts,
      runAt: new Date(),
      createdAt: new Date(),
    };
    outcomes.push((await handleSendJob(row, workerContext(ctx))).kind);
  }
  return outcomes;
}

test('POST /emails/send queues, the worker delivers, the message arrives whole', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: {
      from: 'Acme Billing <billing@acme.test>',
      to: ['Ana <ana@example.test>'],
      cc: 'cc@example.test',
      subject: 'Your invoice',
      htmlBody:
        '<p>Hello <a href="https://acme.test/invoice?id=1&amp;x=2">invoice</a> <a href="mailto:x@y.test">mail</a></p>',
      headers: { 'X-Campaign': 'spring' },
      tags: ['invoice'],
      trackOpens: true,
      trackClicks: true,
      attachments: [
        { filename: 'hello.txt', content: Buffer.from('hello world').toString('base64'), contentType: 'text/plain' },
      ],
    },
  });
  assert.is(res.statusCode, 202, res.body);
  const body = res.json();
  assert.is(body.status, 'QUEUED');
  assert.match(body.messageId, /^<.+@acme\.test>$/);
  assert.is(res.headers['x-quota-limit'], '100');
  assert.is(res.headers['x-quota-used'], '1');
  assert.is(res.headers['x-quota-percentage'], '1');
  // The accept writes the log's tag entry beside it (email_log_tags), which the tag search walks.
  assert.equal(
    await ctx.db.sequelize.query(
      `SELECT t.tag FROM email_log_tags t JOIN email_logs l ON l.id = t.id AND l.created_at = t.created_at AND l.tenant_id = t.tenant_id WHERE t.id = :id`,
      { type: QueryTypes.SELECT, replacements: { id: body.id } },
    ),
    [{ tag: 'invoice' }],
  );
  const tagged = await ctx.app.inject({ method: 'GET', url: '/emails/logs?tag=invoice', headers: world.asKey });
  assert.equal(
    tagged.json().data.map((log: { id: string }) => log.id),
    [body.id],
    tagged.body,
  );

  assert.equal(await runSendJobs(), ['done']);
  const received = await sink.waitFor((m) => m.parsed.messageId === body.messageId);
  assert.equal(received.rcptTo.sort(), ['ana@example.test', 'cc@example.test']);
  const mail = received.parsed;
  assert.is(mail.subject, 'Your invoice');
  assert.is(mail.headers.get('x-campaign'), 'spring');
  assert.match(received.raw, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click\r$/m);
  const listUnsubscribe = String(received.raw.match(/^List-Unsubscribe:([^\r\n]*(?:\r\n[ \t][^\r\n]*)*)/m)?.[1] ?? '')
    .replace(/\r\n[ \t]+/g, ' ')
    .trim();
  // The one-click URL only: no mailto the service could not receive.
  assert.match(listUnsubscribe, /^<http:\/\/mail\.example\.test\/u\/[A-Za-z0-9_-]+>$/);
  // Every link token is opaque: neither the e-mail id, the tenant id nor the recipient can be read from it.
  const tokens = [
    listUnsubscribe.match(/\/u\/([A-Za-z0-9_-]+)/)![1],
    String(mail.html).match(/\/t\/c\/([A-Za-z0-9_-]+)/)![1],
    String(mail.html).match(/\/t\/o\/([A-Za-z0-9_-]+)\.gif/)![1],
  ];
  for (const token of tokens) {
    const readable =
      token +
      ' ' +
      Buffer.from(token, 'base64url').toString('latin1') +
      ' ' +
      Buffer.from(token, 'base64').toString('latin1');
    for (const secret of [body.id, world.tenantId, 'ana@example.test', 'acme.test/invoice'])
      assert.not.ok(readable.includes(secret), `${secret} readable in a link token`);
  }
  assert.not.match(
    String(mail.html),
    /Unsubscribe<\/a>/,
    'a transactional send keeps the unsubscribe link in the header only',
  );
  assert.match(String(mail.html), /http:\/\/mail\.example\.test\/t\/c\//);
  assert.not.match(String(mail.html), /href="https:\/\/acme\.test\/invoice/);
  assert.match(String(mail.html), /href="mailto:x@y.test"/);
  assert.match(String(mail.html), /<img src="http:\/\/mail\.example\.test\/t\/o\/[^"]+\.gif"/);
  assert.match(String(mail.text), /Hello/);
  // DKIM covers both RFC 8058 headers.
  const signature = String(received.raw.match(/^DKIM-Signature:([^\r\n]*(?:\r\n[ \t][^\r\n]*)*)/m)?.[1] ?? '').replace(
    /\s+/g,
    '',
  );
  assert.match(signature, /d=acme\.test/);
  assert.match(signature.toLowerCase(), /h=[^;]*list-unsubscribe:list-unsubscribe-post/);
  assert.is(mail.attachments.length, 1);
  assert.is(mail.attachments[0].filename, 'hello.txt');
  assert.is(mail.attachments[0].content.toString(), 'hello world');

  const detail = await ctx.app.inject({ method: 'GET', url: `/emails/logs/${body.id}`, headers: world.asKey });
  assert.is(detail.statusCode, 200);
  const log = detail.json();
  assert.is(log.status, 'SENT');
  assert.equal(
    log.events.map((e: { type: string }) => e.type),
    ['queued', 'sent'],
  );
  assert.is(log.headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');
  assert.is(log.raw, null);
  const [event] = await ctx.db.sequelize.query<{ type: string }>(`SELECT type FROM events WHERE email_id = :id`, {
    replacements: { id: body.id },
    type: QueryTypes.SELECT,
  });
  assert.is(event.type, 'email.sent');
});

test('a test key sync send is captured, never relayed, and not counted', async () => {
  const testKey = await createApiKey(world.tenantId, { environment: 'test' });
  const before = sink.messages.length;
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send?sync=true',
    headers: { authorization: `Bearer ${testKey.key}` },
    payload: { from: 'someone@unverified.test', to: 'bob@example.test', subject: 'Captured', textBody: 'plain text' },
  });
  assert.is(res.statusCode, 200, res.body);
  assert.is(res.json().status, 'SENT');
  assert.is(sink.messages.length, before);
  assert.is(res.headers['x-quota-used'], '1');
  const detail = (
    await ctx.app.inject({ method: 'GET', url: `/emails/logs/${res.json().id}`, headers: world.asKey })
  ).json();
  assert.ok(detail.captured);
  assert.match(detail.raw, /Subject: Captured/);
  assert.match(detail.raw, /plain text/);
  const [{ count }] = await ctx.db.sequelize.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM jobs WHERE queue = 'send'`,
    { type: QueryTypes.SELECT },
  );
  assert.is(count, 0);
});

test('bad input is refused with 400 naming fields; header injection and reserved headers', async () => {
  const cases = [
    {
      payload: { from: 'a@acme.test', to: 'bob@example.test\r\nBcc: evil@x.test', subject: 's', textBody: 't' },
      field: 'to',
    },
    {
      payload: { from: 'a@acme.test', to: 'bob@example.test', subject: 'hi\nBcc: evil@x.test', textBody: 't' },
      field: 'subject',
    },
    {
      payload: {
        from: 'a@acme.test',
        to: 'bob@example.test',
        subject: 's',
        textBody: 't',
        headers: { From: 'x@y.test' },
      },
      field: 'headers.From',
    },
    {
      payload: {
        from: 'a@acme.test',
        to: 'bob@example.test',
        subject: 's',
        textBody: 't',
        headers: { 'X-Ok': 'a\r\nB: c' },
      },
      field: 'headers.X-Ok',
    },
    { payload: { from: 'not an address', to: 'bob@example.test', subject: 's', textBody: 't' }, field: 'from' },
    {
      payload: {
        from: 'a@acme.test',
        to: Array.from({ length: 51 }, (_, i) => `r${i}@example.test`),
        subject: 's',
        textBody: 't',
      },
      field: 'to',
    },
    { payload: { from: 'a@acme.test', to: 'bob@example.test', subject: 's' }, field: 'htmlBody' },
  ];
  for (const { payload, field } of cases) {
    const res = await ctx.app.inject({ method: 'POST', url: '/emails/send', headers: world.asKey, payload });
    assert.is(res.statusCode, 400, `${field}: ${res.body}`);
    const body = res.json();
    assert.is(body.code, 'VALIDATION_FAILED');
    assert.ok(
      body.details.some((d: { field: string }) => d.field.startsWith(field)),
      `${field}: ${res.body}`,
    );
  }
});

test('logs: 404 for another tenant, scope needed, filters', async () => {
  const other = await createWorld(ctx.app);
  const list = await ctx.app.inject({
    method: 'GET',
    url: '/emails/logs?status=SENT&to=ana@example.test&tag=invoice',
    headers: world.asKey,
  });
  assert.is(list.statusCode, 200);
  assert.is(list.json().meta.total, 1);
  const id = list.json().data[0].id;
  const foreign = await ctx.app.inject({ method: 'GET', url: `/emails/logs/${id}`, headers: other.asKey });
  assert.is(foreign.statusCode, 404);
  const readOnly = await createApiKey(world.tenantId, { scopes: ['email:read'] });
  const denied = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: { authorization: `Bearer ${readOnly.key}` },
    payload: { from: 'a@acme.test', to: 'b@example.test', subject: 's', textBody: 't' },
  });
  assert.is(denied.statusCode, 403);
  assert.is(denied.json().code, 'INSUFFICIENT_SCOPE');
});

test('resend makes a new log through the pipeline', async () => {
  const list = (await ctx.app.inject({ method: 'GET', url: '/emails/logs?tag=invoice', headers: world.asKey })).json();
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/emails/logs/${list.data[0].id}/resend`,
    headers: world.asKey,
  });
  assert.is(res.statusCode, 200, res.body);
  assert.is.not(res.json().id, list.data[0].id);
  assert.equal(await runSendJobs(), ['done']);
  await sink.waitFor((m) => m.parsed.messageId === res.json().messageId);
});

test.run();
