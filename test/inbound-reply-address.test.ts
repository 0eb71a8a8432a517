// Issue 52 §3, reply addresses (docs/inbound.md "Reply addresses"), end to end: a tenant turns them on
// (PATCH /inbound/address, `svc inbound address --reply-addresses on`); its sends without a Reply-To of
// their own then carry `reply+<log id>.<tag>@<platform inbound domain>` on the message as the relay (a test
// SMTP sink) receives it, a send's own Reply-To is kept, and a tenant that left it off sends none. A reply
// sent by swaks to that address, without In-Reply-To or References, is received as the tenant's token
// address (its route, or stored when none takes it) and linked to the send: `email.replied` on the log,
// the reply in GET /emails/logs/{id}, the original's log id in `inbound.received`. A forged tag, a log
// that no longer exists and a tenant that turned them off are refused at RCPT TO with nothing stored;
// another tenant sees nothing of the link.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes } from 'sequelize';
import type { TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createApiKey, createWorld } from './helpers/fixtures.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { swaks } from './helpers/swaks.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { runDueDeliveries, startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import type { InProcessCli } from './helpers/svc-inprocess.ts';
import { startInboundListenerWorld, type InboundListenerWorld } from './helpers/inbound-listener-world.ts';
import { emailIdOfReplyAddress, replyAddress } from '../daemon/mail/addresses.ts';

const INBOUND_DOMAIN = 'inbound.mail.example.test';
const REPLY_ADDRESS = /^reply\+[a-z2-7]{26}\.[a-z2-7]{13}@inbound\.mail\.example\.test$/;

let world: InboundListenerWorld;
let ctx: TestContext;
let sink: SmtpSink;
let dns: TestDnsServer;
let receiver: Receiver;
let inbound: { port: number; stop(): Promise<void> };
let cli: InProcessCli;
const scratch = mkdtempSync(join(tmpdir(), 'svc-inbound-reply-address-'));

test.before(async () => {
  sink = await startSmtpSink();
  dns = await startDnsServer();
  receiver = await startReceiver();
  world = await startInboundListenerWorld({ SMTP_URL: `smtp://127.0.0.1:${sink.port}`, DNS_SERVERS: dns.address });
  ({ ctx, cli, inbound } = world);
});
test.after(async () => {
  await world?.close();
  await receiver?.close();
  await dns?.close();
  await sink?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

type Tenant = Awaited<ReturnType<typeof tenant>>;

/** A tenant sending from its verified domain, with a webhook endpoint for both events. */
async function tenant(domain: string) {
  const world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId, domain);
  const api = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object, headers = world.asKey) =>
    ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const endpoint = await api('POST', '/webhooks/endpoints', {
    url: receiver.url,
    events: ['inbound.received', 'email.replied'],
  });
  assert.is(endpoint.statusCode, 201, endpoint.body);
  const token = (await api('GET', '/inbound/address')).json().address.split('@')[0] as string;
  return { ...world, domain, api, endpointId: endpoint.json().id as string, token };
}

async function replyAddresses(who: Tenant, on: boolean) {
  const answer = await who.api('PATCH', '/inbound/address', { replyAddresses: on });
  assert.is(answer.statusCode, 200, answer.body);
  assert.is(answer.json().replyAddresses, on);
}

/** One send through the API and the send job; the message as the relay received it. */
async function sent(who: Tenant, extra: object = {}) {
  const accepted = await who.api('POST', '/emails/send', {
    from: `Shop <shop@${who.domain}>`,
    to: ['ana@example.test'],
    subject: 'Your order shipped',
    textBody: 'It is on its way.',
    ...extra,
  });
  assert.is(accepted.statusCode, 202, accepted.body);
  await runJobs(ctx, 'send');
  const { id, messageId } = accepted.json() as { id: string; messageId: string };
  const received = await sink.waitFor((m) => m.parsed.messageId === messageId);
  return { id, messageId, raw: received.raw, replyTo: received.parsed.replyTo?.value.map((a) => a.address!) ?? [] };
}

/** A reply as a mail client writes one that dropped In-Reply-To and References. */
function reply(to: string, body: string): string {
  return [
    'From: Ana <ana@example.test>',
    `To: ${to}`,
    'Subject: Re: Your order shipped',
    `Message-ID: <${randomUUID()}@example.test>`,
    'Date: Sun, 29 Nov 2026 10:00:00 +0000',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    body,
    '',
    'On Sun, 29 Nov 2026 at 09:00, Shop wrote:',
    '> It is on its way.',
    '',
  ].join('\r\n');
}

async function swaksReply(to: string[], raw: string) {
  const path = join(scratch, `${randomUUID()}.eml`);
  writeFileSync(path, raw);
  return swaks(inbound.port, ['--from', 'ana@example.test', '--to', to.join(','), '--data', `@${path}`]);
}

const countInbound = async () => (await q<{ n: number }>(`SELECT count(*)::int AS n FROM inbound_messages`))[0].n;

test('the address: 46 characters of lower-case base32, read back in any case, refused when the tag does not hold', () => {
  const key = ctx.deps.secrets.linkSigningKey;
  const emailId = randomUUID();
  const address = replyAddress(emailId, INBOUND_DOMAIN, key);
  assert.match(address, REPLY_ADDRESS);
  const local = address.split('@')[0];
  assert.is(local.length, 46);
  assert.is(emailIdOfReplyAddress(local, key), emailId);
  assert.is(emailIdOfReplyAddress(local.toUpperCase(), key), emailId, 'an MTA may change the case');
  const tag = local.slice(-13);
  const forged = local.slice(0, -1) + (local.endsWith('a') ? 'b' : 'a');
  assert.is(emailIdOfReplyAddress(forged, key), null);
  const otherId = replyAddress(randomUUID(), INBOUND_DOMAIN, key).split('@')[0].slice(0, -13);
  assert.is(emailIdOfReplyAddress(otherId + tag, key), null, 'a tag is good for its own id only');
  assert.is(emailIdOfReplyAddress(local, Buffer.alloc(32, 7)), null, 'another key');
  // The id's last character carries 3 bits: another spelling of the same 128 bits is not ours.
  const last = local[25];
  const respelled = `${local.slice(0, 25)}${last === 'a' ? 'b' : String.fromCharCode(last.charCodeAt(0) - 1)}${local.slice(26)}`;
  assert.is(emailIdOfReplyAddress(respelled, key), null);
});

test('the setting: off by default, PATCH /inbound/address with inbound:write, checked; svc inbound address --reply-addresses', async () => {
  const shop = await tenant('setting.test');
  assert.is((await shop.api('GET', '/inbound/address')).json().replyAddresses, false);
  const readOnly = await createApiKey(shop.tenantId, { scopes: ['inbound:read'] });
  const refused = await shop.api(
    'PATCH',
    '/inbound/address',
    { replyAddresses: true },
    {
      authorization: `Bearer ${readOnly.key}`,
    },
  );
  assert.is(refused.statusCode, 403, refused.body);
  assertErrorBody(refused, 403);
  const bad = await shop.api('PATCH', '/inbound/address', { replyAddresses: 'yes' });
  assert.is(bad.statusCode, 400, bad.body);
  assertErrorBody(bad, 400);
  assert.is((await shop.api('GET', '/inbound/address')).json().replyAddresses, false);

  cli.writeProfile({ accessToken: shop.owner.token, tenantId: shop.tenantId, tenantName: 'Shop' });
  const on = await cli.run(['inbound', 'address', '--reply-addresses', 'on', '--json']);
  assert.is(on.code, 0, on.stderr);
  assert.is(JSON.parse(on.stdout).replyAddresses, true);
  assert.is((await shop.api('GET', '/inbound/address')).json().replyAddresses, true);
  const shown = await cli.run(['inbound', 'address']);
  assert.match(shown.stdout, /reply addresses\s+on \(reply\+…@inbound\.mail\.example\.test\)/);
  const off = await cli.run(['inbound', 'address', '--reply-addresses', 'off']);
  assert.is(off.code, 0, off.stderr);
  assert.match(off.stdout, /reply addresses\s+off/);
  const [row] = await q<{ reply_addresses: boolean }>(
    `SELECT reply_addresses FROM inbound_addresses WHERE tenant_id = :t`,
    { t: shop.tenantId },
  );
  assert.is(row.reply_addresses, false);
});

test('the composed message: the reply address as Reply-To when on (single and batch), the send’s own kept, none when off', async () => {
  const on = await tenant('on.test');
  await replyAddresses(on, true);
  const single = await sent(on);
  assert.is(single.replyTo.length, 1, single.raw.slice(0, 2000));
  assert.match(single.replyTo[0], REPLY_ADDRESS);
  assert.is(emailIdOfReplyAddress(single.replyTo[0].split('@')[0], ctx.deps.secrets.linkSigningKey), single.id);
  const unfolded = single.raw.replace(/\r\n[ \t]+/g, ' ');
  assert.ok(unfolded.includes(`\r\nReply-To: ${single.replyTo[0]}\r\n`), unfolded.slice(0, 3000));
  // DKIM covers it like any Reply-To.
  assert.match(unfolded, /^DKIM-Signature:[^\r]*h=[^;]*reply-to/im);
  const detail = (await on.api('GET', `/emails/logs/${single.id}`)).json();
  assert.is(detail.headers['Reply-To'], single.replyTo[0], 'the log shows the header that went out');

  const own = await sent(on, { replyTo: 'Support <help@on.test>' });
  assert.equal(own.replyTo, ['help@on.test']);
  assert.not.match(own.raw, /reply\+/);

  const batch = await on.api('POST', '/emails/batch', {
    from: 'Shop <shop@on.test>',
    subject: 'Batch news',
    htmlBody: '<p>News</p>',
    recipients: [{ to: 'b1@example.test' }, { to: 'b2@example.test' }],
  });
  assert.is(batch.statusCode, 202, batch.body);
  await runJobs(ctx, 'send');
  for (const accepted of batch.json().accepted as { id: string; messageId: string }[]) {
    const received = await sink.waitFor((m) => m.parsed.messageId === accepted.messageId);
    const [address] = received.parsed.replyTo!.value.map((a) => a.address!);
    assert.is(emailIdOfReplyAddress(address.split('@')[0], ctx.deps.secrets.linkSigningKey), accepted.id);
  }

  const off = await tenant('off.test');
  const plain = await sent(off);
  assert.equal(plain.replyTo, []);
  assert.not.match(plain.raw, /^Reply-To:/im);
});

test('a reply to the address, without In-Reply-To: received as the token address, linked — event, log detail, webhook, rows', async () => {
  const shop = await tenant('linked.test');
  const route = await shop.api('POST', '/inbound/routes', {
    address: `${shop.token}@${INBOUND_DOMAIN}`,
    action: 'webhook',
    endpointId: shop.endpointId,
  });
  assert.is(route.statusCode, 201, route.body);
  await replyAddresses(shop, true);
  const send = await sent(shop);
  const address = send.replyTo[0];

  // An MTA on the way may upper-case the local part.
  const run = await swaksReply([address.replace(/^[^@]+/, (l) => l.toUpperCase())], reply(address, 'Thanks, got it!'));
  assert.match(run.output, /<-  250 /, run.output);
  const rows = await q<{
    id: string;
    recipient: string;
    route_id: string;
    reply_email_id: string;
    reply_message_id: string;
  }>(
    `SELECT id, recipient, route_id, status, reply_email_id, reply_message_id FROM inbound_messages WHERE tenant_id = :t`,
    { t: shop.tenantId },
  );
  assert.is(rows.length, 1);
  assert.is(rows[0].recipient, address);
  assert.is(rows[0].route_id, route.json().id);
  assert.is(rows[0].reply_email_id, send.id);
  assert.is(rows[0].reply_message_id, send.messageId);

  await runDueDeliveries(ctx);
  const received = receiver.requests.find(
    (r) => r.rawBody.includes(rows[0].id) && r.rawBody.includes('inbound.received'),
  );
  assert.ok(received, 'the endpoint got the reply');
  const data = JSON.parse(received.rawBody).data;
  assert.equal(data.inReplyTo, { emailId: send.id, messageId: send.messageId });
  assert.is(data.inReplyToHeader, null);
  assert.is(data.recipient, address);
  assert.is(data.mailboxHash, null);
  assert.is(data.strippedText, 'Thanks, got it!');

  const replied = receiver.requests.find(
    (r) => r.rawBody.includes('"email.replied"') && JSON.parse(r.rawBody).data.emailId === send.id,
  );
  assert.ok(replied, 'the email.replied webhook was delivered');
  assert.is(JSON.parse(replied.rawBody).data.reply.inboundId, rows[0].id);
  const events = await q<{ type: string }>(`SELECT type FROM email_events WHERE email_id = :id AND type = 'replied'`, {
    id: send.id,
  });
  assert.is(events.length, 1);
  const detail = (await shop.api('GET', `/emails/logs/${send.id}`)).json();
  assert.equal(
    detail.replies.map((r: { inboundId: string; from: string }) => [r.inboundId, r.from]),
    [[rows[0].id, 'ana@example.test']],
  );
  const message = (await shop.api('GET', `/inbound/messages/${rows[0].id}`)).json();
  assert.is(message.recipient, address);
});

test('no route takes the token address: the reply is stored, linked, and listed for the API', async () => {
  const shop = await tenant('stored.test');
  await replyAddresses(shop, true);
  const send = await sent(shop);
  const run = await swaksReply(send.replyTo, reply(send.replyTo[0], 'Stored, please.'));
  assert.match(run.output, /<-  250 /, run.output);
  const [row] = await q<{
    id: string;
    status: string;
    route_id: string | null;
    action: string;
    reply_email_id: string;
  }>(`SELECT id, status, route_id, action, reply_email_id FROM inbound_messages WHERE tenant_id = :t`, {
    t: shop.tenantId,
  });
  assert.equal([row.status, row.route_id, row.action, row.reply_email_id], ['stored', null, 'store', send.id]);
  const listed = (await shop.api('GET', '/inbound/messages')).json().data as { id: string }[];
  assert.equal(
    listed.map((m) => m.id),
    [row.id],
  );
  const replied = await q(`SELECT 1 FROM events WHERE email_id = :id AND type = 'email.replied'`, { id: send.id });
  assert.is(replied.length, 1);
});

test('refused at RCPT TO with nothing stored: a forged tag, a log that is gone, a tenant that turned them off', async () => {
  const shop = await tenant('refused.test');
  await replyAddresses(shop, true);
  const send = await sent(shop);
  const address = send.replyTo[0];
  const before = await countInbound();

  const [local, domain] = address.split('@');
  const forged = `${local.slice(0, -1)}${local.endsWith('a') ? 'b' : 'a'}@${domain}`;
  const forgedRun = await swaksReply([forged], reply(forged, 'forged'));
  assert.match(forgedRun.output, /<\*\* 550 .*no such mailbox here/, forgedRun.output);
  assert.not.match(forgedRun.output, /^<- +354 /m, 'DATA never reached');

  const gone = replyAddress(randomUUID(), INBOUND_DOMAIN, ctx.deps.secrets.linkSigningKey);
  const goneRun = await swaksReply([gone], reply(gone, 'to a send that is not kept'));
  assert.match(goneRun.output, /<\*\* 550 /, goneRun.output);

  await replyAddresses(shop, false);
  const offRun = await swaksReply([address], reply(address, 'after it was turned off'));
  assert.match(offRun.output, /<\*\* 550 /, offRun.output);
  assert.not.match(offRun.output, /^<- +354 /m);

  assert.is(await countInbound(), before, 'nothing stored');
  assert.is(
    (await q(`SELECT 1 FROM events WHERE email_id = :id AND type = 'email.replied'`, { id: send.id })).length,
    0,
  );
});

test('tenant isolation: another tenant’s recipient of the same reply gets no link, and cannot read the send or the reply', async () => {
  const shop = await tenant('shop-iso.test');
  const other = await tenant('other-iso.test');
  await replyAddresses(shop, true);
  const send = await sent(shop);
  const otherRoute = await other.api('POST', '/inbound/routes', {
    address: `${other.token}@${INBOUND_DOMAIN}`,
    action: 'store',
  });
  assert.is(otherRoute.statusCode, 201, otherRoute.body);
  const otherAddress = `${other.token}@${INBOUND_DOMAIN}`;
  const run = await swaksReply([send.replyTo[0], otherAddress], reply(`${send.replyTo[0]}, ${otherAddress}`, 'Both.'));
  assert.match(run.output, /<-  250 /, run.output);
  const rows = await q<{ tenant_id: string; reply_email_id: string | null; id: string }>(
    `SELECT id, tenant_id, reply_email_id FROM inbound_messages WHERE tenant_id IN (:a, :b)`,
    { a: shop.tenantId, b: other.tenantId },
  );
  const mine = rows.find((r) => r.tenant_id === shop.tenantId)!;
  const theirs = rows.find((r) => r.tenant_id === other.tenantId)!;
  assert.is(mine.reply_email_id, send.id);
  assert.is(theirs.reply_email_id, null, 'the other tenant’s copy links nothing');
  assert.is((await other.api('GET', `/emails/logs/${send.id}`)).statusCode, 404);
  assert.is((await other.api('GET', `/inbound/messages/${mine.id}`)).statusCode, 404);
  const theirsListed = (await other.api('GET', '/inbound/messages')).json().data as { id: string }[];
  assert.equal(
    theirsListed.map((m) => m.id),
    [theirs.id],
  );
  const theirEvents = await q(`SELECT 1 FROM events WHERE tenant_id = :t AND type = 'email.replied'`, {
    t: other.tenantId,
  });
  assert.is(theirEvents.length, 0);
});

test.run();
