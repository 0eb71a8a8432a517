// Pipeline rules: idempotency under concurrency, quota headers and 429, suppression, retries on
// 4xx, FAILED + suppression on 5xx hard bounce, batch, sending pause.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { Tenant } from '../daemon/modules/tenants/model.ts';
import { generateDkimKey } from '../daemon/modules/domains/keys.ts';

let ctx: TestContext;
let sink: SmtpSink;

test.before(async () => {
  sink = await startSmtpSink();
  // No SMTP_URL at boot (capture mode needs no verified domain); relay tests pass a config below.
  ctx = await createTestContext({ env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}` } });
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
});

let dkimKey: Awaited<ReturnType<typeof generateDkimKey>> | null = null;
async function verifiedWorld() {
  const world = await createWorld(ctx.app);
  dkimKey ??= await generateDkimKey(ctx.deps.secrets.encryptionKey);
  await ctx.db.sequelize.query(
    `INSERT INTO domains (tenant_id, name, status, dkim_selector, dkim_public_key, dkim_private_key_sealed) VALUES (:t, 'acme.test', 'verified', :s, :p, :k)`,
    { replacements: { t: world.tenantId, s: dkimKey.selector, p: dkimKey.publicKey, k: dkimKey.privateKeySealed } },
  );
  return world;
}

const message = (to = 'ana@example.test') => ({ from: 'app@acme.test', to, subject: 'Hi', textBody: 'hello' });

test('from an unverified domain with a relay configured → 403', async () => {
  const world = await createWorld(ctx.app);
  const res = await ctx.app.inject({ method: 'POST', url: '/emails/send', headers: world.asKey, payload: message() });
  assert.is(res.statusCode, 403);
  assert.is(res.json().code, 'DOMAIN_NOT_VERIFIED');
});

test('20 concurrent duplicates with one Idempotency-Key → one log, same answer; other body → 409', async () => {
  const world = await verifiedWorld();
  const headers = { ...world.asKey, 'idempotency-key': 'order-42' };
  const answers = await Promise.all(
    Array.from({ length: 20 }, () =>
      ctx.app.inject({ method: 'POST', url: '/emails/send', headers, payload: message() }),
    ),
  );
  const ids = new Set(answers.map((a) => a.json().id));
  assert.equal(
    answers.map((a) => a.statusCode).filter((s) => s !== 202),
    [],
    answers.map((a) => a.body).join('\n'),
  );
  assert.is(ids.size, 1);
  const [{ count }] = await ctx.db.sequelize.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM email_logs WHERE tenant_id = :t`,
    { replacements: { t: world.tenantId }, type: QueryTypes.SELECT },
  );
  assert.is(count, 1);
  const other = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers,
    payload: message('other@example.test'),
  });
  assert.is(other.statusCode, 409, other.body);
  assert.is(other.json().code, 'IDEMPOTENCY_KEY_REUSED');
  // The field works like the header: same body → the first answer.
  const viaField = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: { ...message(), idempotencyKey: 'order-42' },
  });
  assert.is(viaField.statusCode, 202);
  assert.is(viaField.json().id, [...ids][0]);
  assert.is(viaField.headers['idempotent-replayed'], 'true');
  await runJobs(ctx, 'send');
});

test('quota: headers, warning from 80 %, 429 with Retry-After above 110 %; test keys do not count', async () => {
  const world = await verifiedWorld();
  await Tenant.update({ monthlyLimit: 10 }, { where: { id: world.tenantId } });
  let last;
  for (let i = 0; i < 8; i += 1)
    last = await ctx.app.inject({ method: 'POST', url: '/emails/send', headers: world.asKey, payload: message() });
  assert.is(last!.headers['x-quota-used'], '8');
  assert.is(last!.headers['x-quota-percentage'], '80');
  assert.is(last!.headers['x-quota-warning'], 'true');
  for (let i = 0; i < 3; i += 1)
    last = await ctx.app.inject({ method: 'POST', url: '/emails/send', headers: world.asKey, payload: message() });
  assert.is(last!.statusCode, 202);
  assert.is(last!.headers['x-quota-used'], '11');
  assert.is(last!.headers['x-quota-warning'], undefined);
  const refused = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: message(),
  });
  assert.is(refused.statusCode, 429);
  assert.is(refused.json().code, 'QUOTA_EXCEEDED');
  assert.ok(Number(refused.headers['retry-after']) > 0);
  assert.is(refused.headers['x-quota-limit'], '10');
  const testKey = await createApiKey(world.tenantId, { environment: 'test' });
  const captured = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: { authorization: `Bearer ${testKey.key}` },
    payload: message(),
  });
  assert.is(captured.statusCode, 202);
  assert.is(captured.headers['x-quota-used'], '11');
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'send'`);
});

test('SMTP 4xx → retry later; then delivered', async () => {
  const world = await verifiedWorld();
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: message('retry@example.test'),
  });
  sink.behaviour.onRcpt = (address) =>
    address === 'retry@example.test' ? { code: 451, message: '4.3.0 try again later' } : null;
  assert.equal(await runJobs(ctx, 'send'), ['retry']);
  let detail = (
    await ctx.app.inject({ method: 'GET', url: `/emails/logs/${res.json().id}`, headers: world.asKey })
  ).json();
  assert.is(detail.status, 'QUEUED');
  assert.match(detail.error, /try again later/);
  assert.ok(detail.events.some((e: { type: string }) => e.type === 'deferred'));
  sink.behaviour.onRcpt = undefined;
  await ctx.db.sequelize.query(`INSERT INTO jobs (queue, tenant_id, payload) VALUES ('send', :t, CAST(:p AS jsonb))`, {
    replacements: { t: world.tenantId, p: JSON.stringify({ emailId: res.json().id }) },
  });
  assert.equal(await runJobs(ctx, 'send', 1), ['done']);
  detail = (await ctx.app.inject({ method: 'GET', url: `/emails/logs/${res.json().id}`, headers: world.asKey })).json();
  assert.is(detail.status, 'SENT');
  await sink.waitFor((m) => m.rcptTo.includes('retry@example.test'));
});

test('SMTP 550 user unknown → FAILED with the answer, suppressed, next send refused', async () => {
  const world = await verifiedWorld();
  sink.behaviour.onRcpt = (address) =>
    address === 'ghost@example.test' ? { code: 550, message: '5.1.1 no such user' } : null;
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: message('ghost@example.test'),
  });
  assert.equal(await runJobs(ctx, 'send'), ['done']);
  sink.behaviour.onRcpt = undefined;
  const detail = (
    await ctx.app.inject({ method: 'GET', url: `/emails/logs/${res.json().id}`, headers: world.asKey })
  ).json();
  assert.is(detail.status, 'BOUNCED');
  assert.match(detail.error, /no such user/);
  const types = detail.events.map((e: { type: string }) => e.type);
  assert.ok(types.includes('failed') && types.includes('bounced'), types.join());
  const suppressions = (
    await ctx.app.inject({ method: 'GET', url: '/suppressions?email=ghost@example.test', headers: world.asKey })
  ).json();
  assert.is(suppressions.data[0].reason, 'bounce');
  const again = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: message('ghost@example.test'),
  });
  assert.is(again.statusCode, 422);
  assert.is(again.json().code, 'RECIPIENT_SUPPRESSED');
  const events = await ctx.db.sequelize.query<{ type: string }>(
    `SELECT type FROM events WHERE email_id = :id ORDER BY created_at`,
    { replacements: { id: res.json().id }, type: QueryTypes.SELECT },
  );
  assert.equal(events.map((e) => e.type).sort(), ['email.bounced', 'email.failed']);
});

test('batch: per-recipient logs, suppressed and invalid recipients rejected, quota per recipient', async () => {
  const world = await verifiedWorld();
  await ctx.app.inject({
    method: 'POST',
    url: '/suppressions',
    headers: world.asKey,
    payload: { email: 'gone@example.test', reason: 'manual' },
  });
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/batch',
    headers: world.asKey,
    payload: {
      from: 'app@acme.test',
      subject: 'News',
      htmlBody: '<p>hi</p>',
      recipients: [
        { to: 'a@example.test', data: { n: 1 } },
        { to: 'gone@example.test' },
        { to: 'b@example.test' },
        { to: 'bad address' },
      ],
    },
  });
  assert.is(res.statusCode, 202, res.body);
  const body = res.json();
  assert.equal(
    body.accepted.map((a: { to: string }) => a.to),
    ['a@example.test', 'b@example.test'],
  );
  assert.equal(body.rejected.map((r: { to: string }) => r.to).sort(), ['bad address', 'gone@example.test']);
  assert.is(body.rejected.find((r: { to: string }) => r.to === 'gone@example.test').reason, 'suppressed');
  assert.is(res.headers['x-quota-used'], '2');
  const slug = await ctx.app.inject({
    method: 'POST',
    url: '/emails/batch',
    headers: world.asKey,
    payload: { from: 'app@acme.test', slug: 'no-such-template', recipients: [{ to: 'a@example.test' }] },
  });
  assert.is(slug.statusCode, 422);
  assert.is(slug.json().code, 'TEMPLATE_NOT_FOUND');
  const tooMany = await ctx.app.inject({
    method: 'POST',
    url: '/emails/batch',
    headers: world.asKey,
    payload: {
      from: 'app@acme.test',
      subject: 's',
      htmlBody: 'x',
      recipients: Array.from({ length: 101 }, (_, i) => ({ to: `r${i}@example.test` })),
    },
  });
  assert.is(tooMany.statusCode, 400);
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'send'`);
});

test('paused tenant → 403 with a sentence; many bounces pause automatically', async () => {
  const world = await verifiedWorld();
  // 1,000 sends (the representative volume), 100 of them hard-bounced by distinct recipients: 10 %.
  await ctx.db.sequelize.query(
    `WITH logs AS (
       INSERT INTO email_logs (tenant_id, message_id, from_address, to_addresses, status)
       SELECT :t, 'm' || g, 'app@acme.test', ARRAY['x' || g || '@example.test'], CASE WHEN g <= 100 THEN 'BOUNCED' ELSE 'SENT' END
         FROM generate_series(1, 1000) g RETURNING id, to_addresses[1] AS recipient, status)
     INSERT INTO recipient_outcomes (tenant_id, email_id, recipient, kind)
     SELECT :t, id, recipient, 'hard_bounce' FROM logs WHERE status = 'BOUNCED'`,
    { replacements: { t: world.tenantId } },
  );
  const { evaluateSendingRisk } = await import('../daemon/modules/emails/sending-risk.ts');
  const judged = await evaluateSendingRisk(
    { sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets },
    world.tenantId,
  );
  assert.is(judged.level, 'pause');
  const res = await ctx.app.inject({ method: 'POST', url: '/emails/send', headers: world.asKey, payload: message() });
  assert.is(res.statusCode, 403);
  assert.is(res.json().code, 'SENDING_PAUSED');
  assert.match(
    res.json().message,
    /hard-bounce rate 10 % \(100 hard bounces from distinct recipients over the last 1000 sends\)/,
  );
});

test('a template send answers 422 while template rendering is not available', async () => {
  const world = await verifiedWorld();
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: { from: 'app@acme.test', to: 'a@example.test', templateVersionId: '00000000-0000-4000-8000-000000000000' },
  });
  assert.ok(res.statusCode === 422 || res.statusCode === 202, res.body);
});

test.run();
