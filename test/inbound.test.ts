// Provider receivers: Amazon SES through SNS (AWS's sample notifications as fixtures) and the
// plain JSON DSN. Token auth, log status, suppressions, events and webhook deliveries, the pause.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';

const TOKEN = 'inbound-token-for-tests-0123456789';
let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext({ env: { INBOUND_WEBHOOK_TOKEN: TOKEN } });
});
test.after(async () => {
  await ctx?.close();
});

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`./fixtures/ses/${name}.json`, import.meta.url), 'utf8'));
const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

async function createLog(
  tenantId: string,
  options: { to?: string[]; status?: string } = {},
): Promise<{ id: string; messageId: string }> {
  const id = randomUUID();
  const messageId = `<${id}@example.com>`;
  await ctx.db.sequelize.query(
    `INSERT INTO email_logs (id, tenant_id, status, message_id, from_address, to_addresses, subject, sent_at)
     VALUES (:id, :tenantId, :status, :messageId, 'john@example.com', CAST(:to AS text[]), 'Hello', now())`,
    {
      replacements: {
        id,
        tenantId,
        status: options.status ?? 'SENT',
        messageId,
        to: `{${(options.to ?? ['jane@example.com']).join(',')}}`,
      },
    },
  );
  return { id, messageId };
}

/** The AWS sample notification, pointed at our log by its Message-ID header. */
function sesNotification(name: string, messageId: string) {
  const message = fixture(name);
  message.mail.commonHeaders.messageId = messageId;
  for (const header of message.mail.headers) if (header.name === 'Message-ID') header.value = messageId;
  return {
    Type: 'Notification',
    MessageId: randomUUID(),
    TopicArn: 'arn:aws:sns:us-east-1:123456789012:ses-notifications',
    Message: JSON.stringify(message),
    Timestamp: new Date().toISOString(),
    SignatureVersion: '1',
  };
}

/** As SNS posts it: JSON with Content-Type text/plain. */
function postSns(body: unknown, url = `/webhooks/ses?token=${TOKEN}`) {
  return ctx.app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

test('SES bounce (AWS sample): log BOUNCED, hard-bounced recipient suppressed, email.bounced emitted and delivered to webhooks', async () => {
  const { tenantId, asKey } = await createWorld(ctx.app);
  const endpoint = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: asKey,
    payload: { url: 'http://127.0.0.1:9/x', events: ['email.bounced'] },
  });
  const log = await createLog(tenantId, { to: ['jane@example.com', 'mary@example.com', 'richard@example.com'] });
  const res = await postSns(sesNotification('bounce', log.messageId));
  assert.is(res.statusCode, 200, res.body);
  assert.equal(res.json(), { ok: true, processed: 1 });
  // One of three recipients bounced: the message reached the other two, so the send keeps its status.
  const [row] = await q<{ status: string; error: string | null }>(
    `SELECT status, error FROM email_logs WHERE id = :id`,
    { id: log.id },
  );
  assert.is(row.status, 'SENT');
  const suppressed = await q<{ email: string; reason: string }>(
    `SELECT email, reason FROM suppressions WHERE tenant_id = :tenantId`,
    { tenantId },
  );
  assert.equal(suppressed, [{ email: 'jane@example.com', reason: 'bounce' }]);
  const [event] = await q<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, data FROM events WHERE email_id = :id`,
    { id: log.id },
  );
  assert.is(event.type, 'email.bounced');
  assert.is(event.data.bounceType, 'hard');
  assert.equal(event.data.recipients, ['jane@example.com']);
  assert.match(String(event.data.diagnostic), /550 5\.1\.1/);
  const deliveries = await q(
    `SELECT 1 FROM webhook_deliveries WHERE endpoint_id = :id AND event_type = 'email.bounced'`,
    { id: endpoint.json().id },
  );
  assert.is(deliveries.length, 1);
});

test('SES transient bounce does not suppress', async () => {
  const { tenantId } = await createWorld(ctx.app);
  const log = await createLog(tenantId);
  const notification = sesNotification('bounce', log.messageId);
  const message = JSON.parse(notification.Message);
  message.bounce.bounceType = 'Transient';
  message.bounce.bounceSubType = 'MailboxFull';
  notification.Message = JSON.stringify(message);
  assert.is((await postSns(notification)).statusCode, 200);
  assert.is((await q(`SELECT 1 FROM suppressions WHERE tenant_id = :tenantId`, { tenantId })).length, 0);
  const [event] = await q<{ data: Record<string, unknown> }>(`SELECT data FROM events WHERE email_id = :id`, {
    id: log.id,
  });
  assert.is(event.data.bounceType, 'soft');
});

test('SES complaint (AWS sample): log COMPLAINED, complainant suppressed with reason complaint', async () => {
  const { tenantId } = await createWorld(ctx.app);
  const log = await createLog(tenantId, { to: ['jane@example.com', 'mary@example.com', 'richard@example.com'] });
  const res = await postSns(sesNotification('complaint', log.messageId));
  assert.equal(res.json(), { ok: true, processed: 1 });
  // Richard complained, Jane and Mary did not: the send keeps its status, the complaint is his.
  assert.is(
    (await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, { id: log.id }))[0].status,
    'SENT',
  );
  assert.equal(await q(`SELECT email, reason FROM suppressions WHERE tenant_id = :tenantId`, { tenantId }), [
    { email: 'richard@example.com', reason: 'complaint' },
  ]);
  assert.is(
    (await q<{ type: string }>(`SELECT type FROM events WHERE email_id = :id`, { id: log.id }))[0].type,
    'email.complained',
  );
});

test('SES delivery (AWS sample), also with SNS raw message delivery: log DELIVERED, email.delivered', async () => {
  const { tenantId } = await createWorld(ctx.app);
  const log = await createLog(tenantId);
  const res = await postSns(sesNotification('delivery', log.messageId));
  assert.equal(res.json(), { ok: true, processed: 1 });
  assert.is(
    (await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, { id: log.id }))[0].status,
    'DELIVERED',
  );
  assert.is(
    (await q<{ type: string }>(`SELECT type FROM events WHERE email_id = :id`, { id: log.id }))[0].type,
    'email.delivered',
  );
  assert.is((await q(`SELECT 1 FROM suppressions WHERE tenant_id = :tenantId`, { tenantId })).length, 0);

  const raw = await createLog(tenantId);
  const message = JSON.parse(sesNotification('delivery', raw.messageId).Message);
  const direct = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/ses?token=${TOKEN}`,
    headers: { 'content-type': 'application/json' },
    payload: message,
  });
  assert.equal(direct.json(), { ok: true, processed: 1 });
});

test('unknown message ids and notification types are acknowledged and ignored', async () => {
  const res = await postSns(sesNotification('bounce', '<nobody-sent-this@example.com>'));
  assert.equal(res.json(), { ok: true, processed: 0 });
  const send = await postSns({
    Type: 'Notification',
    Message: JSON.stringify({ notificationType: 'Send', mail: { messageId: 'x' } }),
  });
  assert.equal(send.json(), { ok: true, processed: 0 });
  const unsubscribed = await postSns({ Type: 'UnsubscribeConfirmation', Message: 'bye' });
  assert.equal(unsubscribed.json(), { ok: true, processed: 0 });
  const dsn = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/smtp-dsn?token=${TOKEN}`,
    payload: { messageId: '<unknown@example.com>', type: 'bounced' },
  });
  assert.equal(dsn.json(), { ok: true, processed: 0 });
});

test('SNS SubscriptionConfirmation (AWS sample) queues the confirmation; non-Amazon URLs are refused', async () => {
  const sample = fixture('subscription-confirmation');
  const res = await postSns(sample);
  assert.is(res.statusCode, 200, res.body);
  assert.is(res.json().subscription, 'confirmation queued');
  const jobs = await q<{ payload: { kind: string; subscribeUrl: string } }>(
    `SELECT payload FROM jobs WHERE queue = 'webhook' AND payload->>'kind' = 'sns-subscription-confirm'`,
  );
  assert.is(jobs.length, 1);
  assert.is(jobs[0].payload.subscribeUrl, sample.SubscribeURL);
  for (const url of [
    'https://evil.example/?Action=ConfirmSubscription',
    'http://sns.us-west-2.amazonaws.com/?x=1',
    'https://sns.us-west-2.amazonaws.com.evil.example/',
    'not a url',
  ]) {
    const refused = await postSns({ ...sample, SubscribeURL: url });
    assert.is(refused.statusCode, 400, url);
    assert.is(refused.json().code, 'VALIDATION_FAILED');
  }
  assert.is(
    (await q(`SELECT 1 FROM jobs WHERE queue = 'webhook' AND payload->>'kind' = 'sns-subscription-confirm'`)).length,
    1,
  );
});

test('token: missing or wrong → 401; ?token= and basic auth password accepted', async () => {
  const body = sesNotification('delivery', '<x@example.com>');
  assert.is((await postSns(body, '/webhooks/ses')).statusCode, 401);
  const wrong = await postSns(body, '/webhooks/ses?token=wrong');
  assert.is(wrong.statusCode, 401);
  assert.is(wrong.json().code, 'INBOUND_TOKEN_INVALID');
  const basic = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/smtp-dsn',
    headers: { authorization: `Basic ${Buffer.from(`sns:${TOKEN}`).toString('base64')}` },
    payload: { messageId: '<x@example.com>', type: 'delivered' },
  });
  assert.is(basic.statusCode, 200, basic.body);
  const badBasic = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/smtp-dsn',
    headers: { authorization: `Basic ${Buffer.from('sns:nope').toString('base64')}` },
    payload: { messageId: '<x@example.com>', type: 'delivered' },
  });
  assert.is(badBasic.statusCode, 401);
});

test('bad bodies answer 400', async () => {
  assert.is((await postSns('{not json')).statusCode, 400);
  assert.is((await postSns({ Type: 'Notification' })).statusCode, 400);
  assert.is((await postSns({ Type: 'Notification', Message: 'not json' })).statusCode, 400);
  for (const payload of [
    { messageId: '<a@b>', type: 'exploded' },
    { type: 'delivered' },
    { messageId: '<a@b>', type: 'bounced', bounceType: 'medium' },
  ]) {
    const res = await ctx.app.inject({ method: 'POST', url: `/webhooks/smtp-dsn?token=${TOKEN}`, payload });
    assert.is(res.statusCode, 400, JSON.stringify(payload));
    assert.is(res.json().code, 'VALIDATION_FAILED');
  }
});

test('smtp-dsn: hard bounce suppresses, complaint suppresses, delivered updates the log', async () => {
  const { tenantId } = await createWorld(ctx.app);
  const bounced = await createLog(tenantId, { to: ['gone@example.org'] });
  const complained = await createLog(tenantId, { to: ['angry@example.org'] });
  const delivered = await createLog(tenantId, { to: ['happy@example.org'] });
  const post = (payload: Record<string, unknown>) =>
    ctx.app.inject({ method: 'POST', url: `/webhooks/smtp-dsn?token=${TOKEN}`, payload });
  assert.equal(
    (
      await post({
        messageId: bounced.messageId,
        type: 'bounced',
        bounceType: 'hard',
        diagnostic: '550 5.1.1 no such user',
      })
    ).json(),
    { ok: true, processed: 1 },
  );
  // Angle brackets are optional.
  assert.equal((await post({ messageId: complained.messageId.slice(1, -1), type: 'complained' })).json(), {
    ok: true,
    processed: 1,
  });
  assert.equal((await post({ messageId: delivered.messageId, type: 'delivered' })).json(), { ok: true, processed: 1 });
  const statuses = await q<{ id: string; status: string }>(
    `SELECT id, status FROM email_logs WHERE tenant_id = :tenantId`,
    { tenantId },
  );
  const statusOf = Object.fromEntries(statuses.map((s) => [s.id, s.status]));
  assert.equal(
    [statusOf[bounced.id], statusOf[complained.id], statusOf[delivered.id]],
    ['BOUNCED', 'COMPLAINED', 'DELIVERED'],
  );
  const suppressed = await q<{ email: string; reason: string }>(
    `SELECT email, reason FROM suppressions WHERE tenant_id = :tenantId ORDER BY email`,
    { tenantId },
  );
  assert.equal(suppressed, [
    { email: 'angry@example.org', reason: 'complaint' },
    { email: 'gone@example.org', reason: 'bounce' },
  ]);
  const types = (
    await q<{ type: string }>(`SELECT type FROM events WHERE tenant_id = :tenantId ORDER BY type`, { tenantId })
  ).map((e) => e.type);
  assert.equal(types, ['email.bounced', 'email.complained', 'email.delivered']);
});

test('bounces reported by the receivers count toward the sending risk: warned at 5 %, paused at 10 % of 1,000 sends', async () => {
  const { tenantId } = await createWorld(ctx.app);
  // 1,000 sends, 98 of them already hard-bounced by distinct recipients (seeded as the outcome path writes them).
  await ctx.db.sequelize.query(
    `WITH logs AS (
       INSERT INTO email_logs (tenant_id, status, message_id, from_address, to_addresses, subject, sent_at)
       SELECT :tenantId, 'SENT', '<seed' || g || '@example.com>', 'john@example.com', ARRAY['ok' || g || '@example.org'], 'Hello', now()
         FROM generate_series(1, 998) g RETURNING id, to_addresses[1] AS recipient, message_id)
     INSERT INTO recipient_outcomes (tenant_id, email_id, recipient, kind)
     SELECT :tenantId, id, recipient, 'hard_bounce' FROM logs WHERE message_id ~ '^<seed([1-9]|[1-8][0-9]|9[0-8])@'`,
    { replacements: { tenantId } },
  );
  const first = await createLog(tenantId, { to: ['jane@example.com'] });
  const second = await createLog(tenantId, { to: ['b2@example.org'] });
  const tenantRow = () =>
    q<{ paused: Date | null; paused_reason: string | null; risk: Date | null; risk_reason: string | null }>(
      `SELECT sending_paused_at AS paused, sending_paused_reason AS paused_reason, sending_at_risk_at AS risk,
              sending_at_risk_reason AS risk_reason FROM tenants WHERE id = :tenantId`,
      { tenantId },
    ).then((rows) => rows[0]);
  assert.equal((await postSns(sesNotification('bounce', first.messageId))).json(), { ok: true, processed: 1 });
  let tenant = await tenantRow();
  assert.is(tenant.paused, null, '99 of 1,000 is under 10 %');
  assert.match(
    String(tenant.risk_reason),
    /hard-bounce rate 9\.9 % \(99 hard bounces from distinct recipients over the last 1000 sends\) is at or above the 5 % warning level/,
  );
  // The same notification again (SNS retries, or a replay): nothing more is counted.
  assert.equal((await postSns(sesNotification('bounce', first.messageId))).json(), { ok: true, processed: 0 });
  await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/smtp-dsn?token=${TOKEN}`,
    payload: { messageId: second.messageId, type: 'bounced', bounceType: 'hard' },
  });
  tenant = await tenantRow();
  assert.ok(tenant.paused, 'sending is paused');
  assert.match(
    String(tenant.paused_reason),
    /hard-bounce rate 10 % \(100 hard bounces from distinct recipients over the last 1000 sends\) is at or above the 10 % pause level/,
  );
  const warnings = await q(`SELECT data FROM events WHERE tenant_id = :tenantId AND type = 'tenant.sending_at_risk'`, {
    tenantId,
  });
  assert.is(warnings.length, 1, 'warned once');
});

test('an SES bounce naming only strangers, or a smtp-dsn naming nobody for a 3-recipient send, changes nothing and is kept', async () => {
  const { tenantId } = await createWorld(ctx.app);
  const log = await createLog(tenantId, { to: ['ann@example.org', 'bob@example.org', 'cid@example.org'] });
  // The AWS sample names jane@example.com, whom this send did not go to.
  assert.equal((await postSns(sesNotification('bounce', log.messageId))).json(), { ok: true, processed: 0 });
  const dsn = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/smtp-dsn?token=${TOKEN}`,
    payload: { messageId: log.messageId, type: 'complained' },
  });
  assert.equal(dsn.json(), { ok: true, processed: 0 });
  assert.is(
    (await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, { id: log.id }))[0].status,
    'SENT',
  );
  assert.equal(await q(`SELECT 1 FROM suppressions WHERE tenant_id = :tenantId`, { tenantId }), []);
  assert.equal(await q(`SELECT 1 FROM events WHERE email_id = :id`, { id: log.id }), []);
  assert.equal(
    await q(`SELECT source, kind, reason FROM inbound_reports WHERE email_id = :id ORDER BY received_at`, {
      id: log.id,
    }),
    [
      { source: 'ses', kind: 'bounce', reason: 'names jane@example.com, whom the send did not go to' },
      { source: 'smtp-dsn', kind: 'complaint', reason: 'names no recipient, and the send went to 3 recipients' },
    ],
  );
});

test('without INBOUND_WEBHOOK_TOKEN the receivers answer 503 with a sentence', async () => {
  const bare = await createTestContext();
  try {
    const res = await bare.app.inject({
      method: 'POST',
      url: '/webhooks/smtp-dsn?token=anything',
      payload: { messageId: '<a@b>', type: 'delivered' },
    });
    assert.is(res.statusCode, 503);
    assert.is(res.json().message, 'inbound receivers are not configured: set INBOUND_WEBHOOK_TOKEN');
    const ses = await bare.app.inject({
      method: 'POST',
      url: '/webhooks/ses',
      headers: { 'content-type': 'text/plain' },
      payload: '{}',
    });
    assert.is(ses.statusCode, 503);
  } finally {
    await bare.close();
  }
});

test.run();
