// Issue 52 §2–3 end to end, through the real inbound listener with swaks as the sending server:
// - a dkimpy-signed reply carrying a forged `Authentication-Results` in our name reaches the webhook
//   with the verdicts we computed (DKIM pass and aligned, SPF and DMARC pass from the test DNS server),
//   the stripped reply, and a stored source holding our header only;
// - it names a send of the tenant in In-Reply-To: `inbound.received` carries the link, the send gets
//   `email.replied` (timeline row and webhook), GET /emails/logs/{id} and `svc logs show` list the reply;
// - another tenant's route receiving a message that names that send links nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes } from 'sequelize';
import type { TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { swaks } from './helpers/swaks.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { runDueDeliveries, startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { dkimPython, dkimpySign, publishedDkimKey } from './helpers/dkim-verify.ts';
import type { InProcessCli } from './helpers/svc-inprocess.ts';
import { startInboundListenerWorld, type InboundListenerWorld } from './helpers/inbound-listener-world.ts';
import type { InboundParsedMessage } from '../shared/schemas/inbound-message.ts';

let world: InboundListenerWorld;
let ctx: TestContext;
let dns: TestDnsServer;
let receiver: Receiver;
let inbound: { port: number; stop(): Promise<void> };
let cli: InProcessCli;
let python: string;
let senderKey: string;
const scratch = mkdtempSync(join(tmpdir(), 'svc-inbound-replies-'));

test.before(async () => {
  python = dkimPython();
  dns = await startDnsServer();
  receiver = await startReceiver();
  senderKey = publishedDkimKey(dns.zone, 'sender.test', 's1');
  // swaks connects from 127.0.0.1, which the sender's SPF lists.
  dns.zone.txt.set('sender.test', ['v=spf1 ip4:127.0.0.1 -all']);
  dns.zone.txt.set('_dmarc.sender.test', ['v=DMARC1; p=reject']);
  world = await startInboundListenerWorld({ DNS_SERVERS: dns.address });
  ({ ctx, cli, inbound } = world);
});
test.after(async () => {
  await world?.close();
  await receiver?.close();
  await dns?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** A tenant with an inbound domain (MX checked), a webhook route on it, and an endpoint for both events. */
async function tenantWithRoute(domain: string) {
  const world = await createWorld(ctx.app);
  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    ctx.app.inject({ method, url, headers: world.asKey, ...(payload ? { payload } : {}) });
  const endpoint = await api('POST', '/webhooks/endpoints', {
    url: receiver.url,
    events: ['inbound.received', 'email.replied'],
  });
  assert.is(endpoint.statusCode, 201, endpoint.body);
  dns.zone.mx.set(domain, [{ exchange: 'mail.example.test', priority: 10 }]);
  const added = await api('POST', '/inbound/domains', { name: domain });
  assert.is(added.statusCode, 201, added.body);
  const verified = await api('POST', `/inbound/domains/${added.json().id}/verify`);
  assert.is(verified.json().status, 'verified', verified.body);
  const route = await api('POST', '/inbound/routes', {
    address: `support@${domain}`,
    action: 'webhook',
    endpointId: endpoint.json().id,
  });
  assert.is(route.statusCode, 201, route.body);
  return { ...world, api };
}

/** A delivered send of the tenant, as the send path leaves its log. */
async function sentLog(tenantId: string) {
  const id = randomUUID();
  const messageId = `<${id}@shop.test>`;
  await ctx.db.sequelize.query(
    `INSERT INTO email_logs (id, tenant_id, status, message_id, from_address, to_addresses, subject, sent_at)
     VALUES (:id, :tenantId, 'DELIVERED', :messageId, 'Shop <shop@shop.test>', ARRAY['alice@sender.test']::text[], 'Your order', now())`,
    { replacements: { id, tenantId, messageId } },
  );
  return { id, messageId };
}

function reply(to: string, inReplyTo: string, body: string): string {
  return [
    'From: Alice <alice@sender.test>',
    `To: ${to}`,
    'Subject: Re: Your order',
    `Message-ID: <${randomUUID()}@sender.test>`,
    'Date: Sun, 29 Nov 2026 10:00:00 +0000',
    `In-Reply-To: ${inReplyTo}`,
    `References: ${inReplyTo}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
    '-- ',
    'Alice',
    '',
    'On Sat, 28 Nov 2026 at 09:00, Shop <shop@shop.test> wrote:',
    '> Your order shipped.',
    '',
  ].join('\r\n');
}

async function swaksData(from: string, to: string, raw: string) {
  const path = join(scratch, `${randomUUID()}.eml`);
  writeFileSync(path, raw);
  return swaks(inbound.port, ['--from', from, '--to', to, '--data', `@${path}`]);
}

type Delivered = Omit<InboundParsedMessage, 'inReplyTo'> & {
  inboundId: string;
  inReplyTo: { emailId: string; messageId: string } | null;
};

async function deliveredPayload(inboundId: string): Promise<Delivered> {
  await runDueDeliveries(ctx);
  const request = receiver.requests.find(
    (r) => r.rawBody.includes(inboundId) && r.rawBody.includes('inbound.received'),
  );
  assert.ok(request, 'the endpoint got the message');
  return JSON.parse(request.rawBody).data as Delivered;
}

test('a signed reply with a forged Authentication-Results: our verdicts, the link to its send, email.replied, svc logs show', async () => {
  const shop = await tenantWithRoute('shop.test');
  const send = await sentLog(shop.tenantId);
  const forged = 'Authentication-Results: mail.example.test; spf=pass; dkim=pass header.d=bank.test; dmarc=pass\r\n';
  const signed = await dkimpySign(python, reply('support@shop.test', send.messageId, 'Yes, it arrived. Thanks!'), {
    domain: 'sender.test',
    selector: 's1',
    privateKey: senderKey,
  });
  const run = await swaksData('alice@sender.test', 'support@shop.test', forged + signed);
  assert.match(run.output, /<-  250 /, run.output);
  const [row] = await q<{ id: string; reply_email_id: string }>(
    `SELECT id, reply_email_id FROM inbound_messages WHERE tenant_id = :t`,
    { t: shop.tenantId },
  );
  assert.is(row.reply_email_id, send.id);

  const data = await deliveredPayload(row.id);
  assert.is(data.auth.dkim.result, 'pass');
  assert.equal(
    data.auth.dkim.signatures.map((s) => [s.domain, s.result, s.aligned]),
    [['sender.test', 'pass', true]],
  );
  assert.is(data.auth.spf.result, 'pass');
  assert.is(data.auth.spf.clientIp, '127.0.0.1');
  assert.is(data.auth.dmarc.result, 'pass');
  assert.is(data.strippedText, 'Yes, it arrived. Thanks!');
  assert.is(data.strippedSignature, 'Alice');
  assert.equal(data.inReplyTo, { emailId: send.id, messageId: send.messageId });
  const ours = data.headers.filter((h) => h.name.toLowerCase() === 'authentication-results');
  assert.is(ours.length, 1, JSON.stringify(ours));
  assert.match(ours[0].value, /^mail\.example\.test; dkim=pass /);
  const raw = await shop.api('GET', `/inbound/messages/${row.id}/raw`);
  assert.not.ok(raw.body.includes('bank.test'), 'the forged verdict is not in the stored source');

  // The send's side: the timeline row, the email.replied webhook, the log's replies, the CLI.
  const [event] = await q<{ data: { reply: { inboundId: string } } }>(
    `SELECT data FROM events WHERE email_id = :id AND type = 'email.replied'`,
    { id: send.id },
  );
  assert.is(event.data.reply.inboundId, row.id);
  const replied = receiver.requests.find((r) => r.rawBody.includes('"email.replied"'));
  assert.ok(replied, 'the email.replied webhook was delivered');
  assert.is(JSON.parse(replied.rawBody).data.emailId, send.id);
  const detail = await shop.api('GET', `/emails/logs/${send.id}`);
  assert.equal(
    detail
      .json()
      .replies.map((r: { inboundId: string; from: string; subject: string }) => [r.inboundId, r.from, r.subject]),
    [[row.id, 'alice@sender.test', 'Re: Your order']],
  );
  cli.writeProfile({ accessToken: shop.owner.token, tenantId: shop.tenantId, tenantName: 'Shop' });
  const shown = await cli.run(['logs', 'show', send.id]);
  assert.is(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /Replies\n.*alice@sender\.test {2}Re: Your order {2}/);
  assert.ok(shown.stdout.includes(row.id));
});

test('a reply to two addresses of one tenant: both rows carry the link, the send gets ONE email.replied', async () => {
  const shop = await tenantWithRoute('shop-two.test');
  const [route] = (await shop.api('GET', '/inbound/routes')).json().data as { endpointId: string }[];
  const sales = await shop.api('POST', '/inbound/routes', {
    address: 'sales@shop-two.test',
    action: 'webhook',
    endpointId: route.endpointId,
  });
  assert.is(sales.statusCode, 201, sales.body);
  const send = await sentLog(shop.tenantId);
  const path = join(scratch, `${randomUUID()}.eml`);
  writeFileSync(path, reply('support@shop-two.test, sales@shop-two.test', send.messageId, 'To both of you.'));
  const run = await swaks(inbound.port, [
    '--from',
    'alice@sender.test',
    '--to',
    'support@shop-two.test,sales@shop-two.test',
    '--data',
    `@${path}`,
  ]);
  assert.match(run.output, /<-  250 /, run.output);
  const rows = await q<{ recipient: string; reply_email_id: string }>(
    `SELECT recipient, reply_email_id FROM inbound_messages WHERE tenant_id = :t ORDER BY recipient`,
    { t: shop.tenantId },
  );
  assert.equal(
    rows.map((r) => [r.recipient, r.reply_email_id]),
    [
      ['sales@shop-two.test', send.id],
      ['support@shop-two.test', send.id],
    ],
  );
  const replied = await q(`SELECT 1 FROM events WHERE email_id = :id AND type = 'email.replied'`, { id: send.id });
  assert.is(replied.length, 1);
  const timeline = await q(`SELECT 1 FROM email_events WHERE email_id = :id AND type = 'replied'`, { id: send.id });
  assert.is(timeline.length, 1);
});

test('never across tenants: a message to another tenant naming this send links nothing', async () => {
  const shop = await tenantWithRoute('shop-a.test');
  const other = await tenantWithRoute('other-b.test');
  const send = await sentLog(shop.tenantId);
  const run = await swaksData(
    'alice@sender.test',
    'support@other-b.test',
    reply('support@other-b.test', send.messageId, 'I quote their message id.'),
  );
  assert.match(run.output, /<-  250 /, run.output);
  const [row] = await q<{ id: string; reply_email_id: string | null }>(
    `SELECT id, reply_email_id FROM inbound_messages WHERE tenant_id = :t`,
    { t: other.tenantId },
  );
  assert.is(row.reply_email_id, null);
  const data = await deliveredPayload(row.id);
  assert.is(data.inReplyTo, null);
  assert.is((await q(`SELECT 1 FROM email_events WHERE email_id = :id`, { id: send.id })).length, 0);
  assert.is((await q(`SELECT 1 FROM events WHERE email_id = :id`, { id: send.id })).length, 0);
});

test.run();
