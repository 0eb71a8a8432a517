// Issue 52 §3: an inbound message naming a Message-ID this service sent is linked to that send — In-Reply-To
// first, then References from the newest — within the route's tenant only; the link records `email.replied`
// on the original log (timeline row and the webhook's delivery row), GET /emails/logs/{id} lists the reply
// and `svc logs show` prints it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { linkReply, recordReply, replyCandidates } from '../daemon/modules/inbound-routing/reply-link.ts';
import { timelineDetail } from '../cli/services/timeline.ts';

let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  await ctx?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

async function sentLog(tenantId: string, subject = 'Your order') {
  const id = randomUUID();
  const messageId = `<${id}@acme.test>`;
  await ctx.db.sequelize.query(
    `INSERT INTO email_logs (id, tenant_id, status, message_id, from_address, to_addresses, subject, sent_at)
     VALUES (:id, :tenantId, 'DELIVERED', :messageId, 'Shop <shop@acme.test>', ARRAY['alice@sender.test']::text[], :subject, now())`,
    { replacements: { id, tenantId, messageId, subject } },
  );
  return { id, messageId };
}

async function storedInbound(tenantId: string, subject: string) {
  const id = randomUUID();
  await ctx.db.sequelize.query(
    `INSERT INTO inbound_messages (id, tenant_id, action, status, recipient, from_address, subject, size, raw_gzip, parsed)
     VALUES (:id, :tenantId, 'store', 'stored', 'support@acme.test', 'alice@sender.test', :subject, 10, '\\x00', '{}')`,
    { replacements: { id, tenantId, subject } },
  );
  return id;
}

const deps = () => ({ sequelize: ctx.db.sequelize });

test('candidates: In-Reply-To first, then References newest first, each once', () => {
  assert.equal(replyCandidates({ inReplyTo: '<b@x>', references: ['<a@x>', '<b@x>', '<c@x>'] }), [
    '<b@x>',
    '<c@x>',
    '<a@x>',
  ]);
  assert.equal(replyCandidates({ inReplyTo: null, references: [] }), []);
});

test('a reply links by In-Reply-To, else by the newest References id of the tenant; a stranger id links nothing', async () => {
  const { tenantId } = await createWorld(ctx.app);
  const older = await sentLog(tenantId, 'First');
  const newer = await sentLog(tenantId, 'Second');
  assert.equal(await linkReply(deps(), { tenantId }, { inReplyTo: newer.messageId, references: [older.messageId] }), {
    emailId: newer.id,
    messageId: newer.messageId,
  });
  // A client that dropped In-Reply-To (or put a foreign one there): the newest References id that is ours.
  assert.equal(
    await linkReply(
      deps(),
      { tenantId },
      { inReplyTo: '<not-ours@gmail.test>', references: [older.messageId, newer.messageId, '<x@gmail.test>'] },
    ),
    { emailId: newer.id, messageId: newer.messageId },
  );
  assert.is(await linkReply(deps(), { tenantId }, { inReplyTo: '<nobody@x.test>', references: [] }), null);
});

test('never across tenants: a reply naming another tenant’s send links nothing and records nothing there', async () => {
  const victim = await createWorld(ctx.app);
  const attacker = await createWorld(ctx.app);
  const send = await sentLog(victim.tenantId);
  assert.is(
    await linkReply(deps(), { tenantId: attacker.tenantId }, { inReplyTo: send.messageId, references: [] }),
    null,
  );
  // Even called with the other tenant's log id, recordReply finds no log of the attacker's tenant.
  const inbound = await storedInbound(attacker.tenantId, 'Re: Your order');
  assert.is(await recordReply(deps(), { tenantId: attacker.tenantId, emailId: send.id, inboundId: inbound }), false);
  const rows = await q(`SELECT 1 FROM email_events WHERE email_id = :id`, { id: send.id });
  assert.is(rows.length, 0);
});

test('recordReply: the replied timeline row, the email.replied webhook, the reply listed on the log', async () => {
  const { tenantId, asKey } = await createWorld(ctx.app);
  await ctx.db.sequelize.query(
    `INSERT INTO webhook_endpoints (tenant_id, url, events, secret_encrypted) VALUES (:tenantId, 'https://hooks.example.test/r', ARRAY['email.replied'], 'x')`,
    { replacements: { tenantId } },
  );
  const send = await sentLog(tenantId);
  const inbound = await storedInbound(tenantId, 'Re: Your order');
  assert.ok(await recordReply(deps(), { tenantId, emailId: send.id, inboundId: inbound }));

  const [event] = await q<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, data FROM events WHERE email_id = :id`,
    { id: send.id },
  );
  assert.is(event.type, 'email.replied');
  assert.is(event.data.emailId, send.id);
  assert.is(event.data.messageId, send.messageId);
  assert.is(event.data.subject, 'Your order', 'the original subject stays the event’s own');
  const reply = event.data.reply as Record<string, unknown>;
  assert.is(reply.inboundId, inbound);
  assert.is(reply.from, 'alice@sender.test');
  assert.is(reply.subject, 'Re: Your order');
  const deliveries = await q<{ event_type: string }>(
    `SELECT event_type FROM webhook_deliveries WHERE tenant_id = :tenantId`,
    { tenantId },
  );
  assert.equal(
    deliveries.map((d) => d.event_type),
    ['email.replied'],
  );

  const response = await ctx.app.inject({ method: 'GET', url: `/emails/logs/${send.id}`, headers: asKey });
  assert.is(response.statusCode, 200, response.body);
  const detail = response.json();
  assert.equal(detail.replies, [
    { inboundId: inbound, from: 'alice@sender.test', subject: 'Re: Your order', receivedAt: reply.receivedAt },
  ]);
  const row = detail.events.find((e: { type: string }) => e.type === 'replied');
  assert.is(timelineDetail(row.type, row.data), `from alice@sender.test · Re: Your order · inbound ${inbound}`);
});

test.run();
