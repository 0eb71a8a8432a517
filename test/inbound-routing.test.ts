// Inbound routing end to end (issue 52): Debian's swaks as the sending server against the real
// inbound listener, routes made through the API, a real webhook receiver fed by the webhook worker's
// own dispatcher, the test DNS server for MX checks and the verdicts. Asserted: SMTP replies (refusals
// at RCPT TO never reach DATA), rows, webhook bodies and their signature, attachments inline and by
// signed URL, store / refuse / token address, replay, scopes and tenant isolation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { freePort, swaks } from './helpers/swaks.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { runDueDeliveries, startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { Sequelize } from 'sequelize';
import { createInboundServer, startInboundServer } from '../daemon/smtp/inbound.ts';
import { enforceRetention } from '../daemon/modules/retention/enforce.ts';
import { verifyWebhookSignature } from '../shared/webhooks.ts';

let ctx: TestContext;
let dns: TestDnsServer;
let receiver: Receiver;
let inbound: { port: number; stop(): Promise<void> };
let world: Awaited<ReturnType<typeof createWorld>>;
let endpoint: { id: string; secret: string };
const scratch = mkdtempSync(join(tmpdir(), 'svc-inbound-routing-'));

test.before(async () => {
  dns = await startDnsServer();
  receiver = await startReceiver();
  const port = await freePort();
  ctx = await createTestContext({
    env: { PUBLIC_URL: 'http://mail.example.test', SMTP_INBOUND_PORT: String(port), DNS_SERVERS: dns.address },
  });
  world = await createWorld(ctx.app);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: world.asKey,
    payload: { url: receiver.url, events: ['inbound.received'] },
  });
  assert.is(created.statusCode, 201, created.body);
  endpoint = created.json();
  const log = { info: () => {}, warn: () => {} };
  inbound = (await startInboundServer({
    config: ctx.config,
    db: ctx.db,
    secrets: ctx.deps.secrets,
    log,
    redis: ctx.deps.redis,
    redisPrefix: ctx.deps.redisPrefix,
  }))!;
});
test.after(async () => {
  await inbound?.stop();
  await ctx?.close();
  await receiver?.close();
  await dns?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

async function api(
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  url: string,
  payload?: object,
  headers: Record<string, string> = world.asKey,
) {
  return ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
}

/** An inbound domain of the tenant, its MX published and checked. */
async function verifiedDomain(name: string, headers = world.asKey): Promise<string> {
  dns.zone.mx.set(name, [{ exchange: 'mail.example.test', priority: 10 }]);
  const added = await api('POST', '/inbound/domains', { name }, headers);
  assert.is(added.statusCode, 201, added.body);
  const verified = await api('POST', `/inbound/domains/${added.json().id}/verify`, undefined, headers);
  assert.is(verified.statusCode, 200, verified.body);
  assert.is(verified.json().status, 'verified', verified.body);
  return added.json().id;
}

async function addRoute(body: object, headers = world.asKey) {
  const created = await api('POST', '/inbound/routes', body, headers);
  assert.is(created.statusCode, 201, created.body);
  return created.json() as { id: string; address: string };
}

function send(to: string[], extra: string[] = []) {
  return swaks(inbound.port, ['--from', 'ann@sender.example', ...to.flatMap((t) => ['--to', t]), ...extra]);
}

test('an inbound domain is verified by its MX; the check explains a wrong one; another tenant cannot take it', async () => {
  dns.zone.mx.set('wrong.example', [{ exchange: 'mx.elsewhere.example', priority: 5 }]);
  const added = await api('POST', '/inbound/domains', { name: 'wrong.example' });
  const checked = await api('POST', `/inbound/domains/${added.json().id}/verify`);
  assert.is(checked.json().status, 'pending');
  assert.match(checked.json().explanation, /names mx\.elsewhere\.example, not mail\.example\.test/);
  await verifiedDomain('support.acme.example');

  const other = await createWorld(ctx.app);
  const theirs = await api('POST', '/inbound/domains', { name: 'support.acme.example' }, other.asKey);
  assert.is(theirs.statusCode, 201);
  const taken = await api('POST', `/inbound/domains/${theirs.json().id}/verify`, undefined, other.asKey);
  assert.is(taken.statusCode, 409, taken.body);
  assertErrorBody(taken, 409);
});

test('routes: checked against the action and the domains of the tenant; scopes and tenant isolation', async () => {
  const notOurs = await api('POST', '/inbound/routes', { address: 'a@nobody.example', action: 'store' });
  assert.is(notOurs.statusCode, 422, notOurs.body);
  assert.match(notOurs.json().message, /not an inbound domain of this tenant/);
  const noEndpoint = await api('POST', '/inbound/routes', { address: 'a@support.acme.example', action: 'webhook' });
  assert.is(noEndpoint.statusCode, 400, noEndpoint.body);
  assertErrorBody(noEndpoint, 400);
  const badShape = await api('POST', '/inbound/routes', { address: 'a*b@support.acme.example', action: 'store' });
  assert.is(badShape.statusCode, 400);

  const route = await addRoute({ address: 'scoped@support.acme.example', action: 'store', description: 'scopes' });
  const readOnly = await createApiKey(world.tenantId, { scopes: ['inbound:read'] });
  const noScope = await createApiKey(world.tenantId, { scopes: ['email:send'] });
  const asRead = { authorization: `Bearer ${readOnly.key}` };
  assert.is((await api('GET', '/inbound/routes', undefined, asRead)).statusCode, 200);
  assert.is((await api('GET', '/inbound/messages', undefined, asRead)).statusCode, 200);
  const refused = await api('POST', '/inbound/routes', { address: 'x@support.acme.example', action: 'store' }, asRead);
  assert.is(refused.statusCode, 403);
  assertErrorBody(refused, 403);
  assert.is(
    (await api('GET', '/inbound/routes', undefined, { authorization: `Bearer ${noScope.key}` })).statusCode,
    403,
  );

  const other = await createWorld(ctx.app);
  assert.is((await api('GET', `/inbound/routes/${route.id}`, undefined, other.asKey)).statusCode, 404);
  assert.is((await api('DELETE', `/inbound/routes/${route.id}`, undefined, other.asKey)).statusCode, 404);
  assert.equal((await api('GET', '/inbound/routes', undefined, other.asKey)).json().data, []);
  const crossTenant = await api('GET', '/inbound/routes', undefined, { ...other.asKey, 'x-tenant-id': world.tenantId });
  assert.is(crossTenant.statusCode, 403);
  const patched = await api('PATCH', `/inbound/routes/${route.id}`, { enabled: false });
  assert.is(patched.json().enabled, false);
  assert.is((await api('DELETE', `/inbound/routes/${route.id}`)).statusCode, 200);
});

test('RCPT TO: an address no route takes and a refuse route are refused in the session, before DATA', async () => {
  await addRoute({
    address: 'closed@support.acme.example',
    action: 'refuse',
    refuseMessage: 'This mailbox is closed, write to help@acme.example',
  });
  const before = await q<{ n: number }>(`SELECT count(*)::int AS n FROM inbound_messages`);
  const unrouted = await send(['nobody@support.acme.example']);
  assert.match(unrouted.output, /<\*\* 550 <nobody@support\.acme\.example>: .*no such mailbox here/, unrouted.output);
  assert.not.match(unrouted.output, /354/, 'DATA never reached');
  const refused = await send(['closed@support.acme.example']);
  assert.match(refused.output, /<\*\* 550 This mailbox is closed, write to help@acme\.example/);
  assert.not.match(refused.output, /354/);
  const unknownDomain = await send(['x@unverified.example']);
  assert.match(unknownDomain.output, /<\*\* 550/);
  const after = await q<{ n: number }>(`SELECT count(*)::int AS n FROM inbound_messages`);
  assert.is(after[0].n, before[0].n, 'nothing stored');
});

test('webhook route: stored before the 250, delivered signed with the parsed message, attachments inline and by signed URL', async () => {
  const route = await addRoute({
    address: 'reply+*@support.acme.example',
    action: 'webhook',
    endpointId: endpoint.id,
    maxInlineAttachmentBytes: 1000,
  });
  const small = join(scratch, 'note.txt');
  const large = join(scratch, 'photo.bin');
  writeFileSync(small, 'a small note\n');
  const largeBytes = randomBytes(5000);
  writeFileSync(large, largeBytes);
  const run = await send(
    ['reply+ticket-42@support.acme.example'],
    [
      '--header',
      'Subject: Re: your ticket',
      '--body',
      'Thanks, that fixed it.\n\nOn Mon, 1 Jan 2026 at 10:00, Support <support@acme.example> wrote:\n> Did it work?\n',
      '--attach-type',
      'text/plain',
      '--attach-name',
      'note.txt',
      '--attach',
      `@${small}`,
      '--attach-type',
      'application/octet-stream',
      '--attach-name',
      'photo.bin',
      '--attach',
      `@${large}`,
    ],
  );
  assert.match(run.output, /<-  250 Accepted: routed \(1\)/, run.output);
  const [row] = await q<{ id: string; status: string; mailbox_hash: string; event_id: string; route_id: string }>(
    `SELECT id, status, mailbox_hash, event_id, route_id FROM inbound_messages WHERE recipient = 'reply+ticket-42@support.acme.example'`,
  );
  assert.is(row.status, 'received');
  assert.is(row.mailbox_hash, 'ticket-42');
  assert.is(row.route_id, route.id);
  const [delivery] = await q<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_deliveries WHERE event_id = :e`, {
    e: row.event_id,
  });
  assert.is(delivery.n, 1, 'the outbox row was committed with the message');

  await runDueDeliveries(ctx);
  const request = receiver.requests.find((r) => r.rawBody.includes(row.id))!;
  assert.ok(request, 'the receiver got the message');
  const payload = verifyWebhookSignature({
    payload: request.rawBody,
    header: request.headers['x-service-signature'],
    secret: endpoint.secret,
  }) as { type: string; tenantId: string; data: Record<string, unknown> };
  assert.is(payload.type, 'inbound.received');
  assert.is(payload.tenantId, world.tenantId);
  const data = payload.data as {
    inboundId: string;
    routeId: string;
    mailboxHash: string;
    subject: string;
    strippedText: string;
    from: { address: string };
    inReplyTo: unknown;
    auth: { spf: { result: string } };
    attachments: { filename: string; size: number; content?: string; url?: string }[];
  };
  assert.is(data.inboundId, row.id);
  assert.is(data.routeId, route.id);
  assert.is(data.mailboxHash, 'ticket-42');
  assert.is(data.subject, 'Re: your ticket');
  assert.is(data.strippedText.trim(), 'Thanks, that fixed it.');
  assert.is(data.from.address, 'ann@sender.example');
  assert.is(data.inReplyTo, null);
  assert.ok(data.auth.spf.result, 'verdicts computed');
  const note = data.attachments.find((a) => a.filename === 'note.txt')!;
  assert.is(Buffer.from(note.content!, 'base64').toString(), 'a small note\n');
  const photo = data.attachments.find((a) => a.filename === 'photo.bin')!;
  assert.is(photo.content, undefined);
  assert.match(photo.url!, /^http:\/\/mail\.example\.test\/inbound\/attachments\/[A-Za-z0-9_-]+$/);
  const fetched = await ctx.app.inject({ method: 'GET', url: new URL(photo.url!).pathname });
  assert.is(fetched.statusCode, 200);
  assert.ok(fetched.rawPayload.equals(largeBytes), 'the large attachment by its URL');
  const forged = await ctx.app.inject({ method: 'GET', url: `${new URL(photo.url!).pathname.slice(0, -4)}AAAA` });
  assert.is(forged.statusCode, 404);

  const [after] = await q<{ status: string }>(`SELECT status FROM inbound_messages WHERE id = :id`, { id: row.id });
  assert.is(after.status, 'delivered', "the endpoint's 2xx");
  const detail = await api('GET', `/inbound/messages/${row.id}`);
  assert.is(detail.json().status, 'delivered');
  assert.is(detail.json().parsed.subject, 'Re: your ticket');
  const raw = await api('GET', `/inbound/messages/${row.id}/raw`);
  assert.is(raw.headers['content-type'], 'message/rfc822');
  assert.match(raw.body, /^Authentication-Results: mail\.example\.test;/m);
  assert.match(raw.body, /Subject: Re: your ticket/);

  // Replay: a new event for the route's endpoint, delivered again.
  const replay = await api('POST', `/inbound/messages/${row.id}/replay`);
  assert.is(replay.statusCode, 200, replay.body);
  assert.is(replay.json().status, 'received');
  const count = receiver.requests.length;
  await runDueDeliveries(ctx);
  assert.is(receiver.requests.length, count + 1);
  assert.match(receiver.requests[count].rawBody, new RegExp(row.id));
  const [replayed] = await q<{ status: string; event_id: string }>(
    `SELECT status, event_id FROM inbound_messages WHERE id = :id`,
    { id: row.id },
  );
  assert.is(replayed.status, 'delivered');
  assert.is(replayed.event_id, replay.json().eventId);
});

test('a webhook that keeps failing leaves the message failed, with why', async () => {
  await addRoute({ address: 'flaky@support.acme.example', action: 'webhook', endpointId: endpoint.id });
  const run = await send(['flaky@support.acme.example']);
  assert.match(run.output, /<-  250 /);
  const [row] = await q<{ id: string }>(
    `SELECT id FROM inbound_messages WHERE recipient = 'flaky@support.acme.example'`,
  );
  receiver.respond = () => ({ status: 500, body: 'down' });
  try {
    // The last attempt: what the retries would reach.
    await ctx.db.sequelize.query(
      `UPDATE webhook_deliveries SET attempt = max_attempts - 1 WHERE event_id = (SELECT event_id FROM inbound_messages WHERE id = :id)`,
      { replacements: { id: row.id } },
    );
    await runDueDeliveries(ctx);
  } finally {
    receiver.respond = () => ({ status: 200, body: 'ok' });
  }
  const [failed] = await q<{ status: string; error: string }>(
    `SELECT status, error FROM inbound_messages WHERE id = :id`,
    { id: row.id },
  );
  assert.is(failed.status, 'failed');
  assert.match(failed.error, /500/);
  const listed = await api('GET', '/inbound/messages?status=failed');
  assert.equal(
    listed.json().data.map((m: { id: string }) => m.id),
    [row.id],
  );
});

test('store route and the token address: kept for the API, searchable, paged by cursor; mixed with a report address', async () => {
  const address = await api('GET', '/inbound/address');
  const token = address.json().address.split('@')[0] as string;
  assert.match(token, /^[a-z2-7]{16}$/);
  assert.is(address.json().domain, 'inbound.mail.example.test');
  await addRoute({ address: `${token}+*@inbound.mail.example.test`, action: 'store' });
  for (const n of [1, 2, 3]) {
    const run = await send([`${token}+order-${n}@inbound.mail.example.test`], ['--header', `Subject: receipt ${n}`]);
    assert.match(run.output, /<-  250 Accepted: routed \(1\)/, run.output);
  }
  // One message to a report address of ours and a routed address: both handled, read once.
  const mixed = await send(
    ['dmarc-reports@mail.example.test', `${token}+mixed@inbound.mail.example.test`],
    ['--header', 'Subject: receipt mixed'],
  );
  assert.match(mixed.output, /<-  250 Accepted: .*routed \(1\)/, mixed.output);

  const first = await api('GET', '/inbound/messages?subject=receipt&status=stored&limit=2');
  assert.is(first.statusCode, 200, first.body);
  assert.equal(
    first.json().data.map((m: { subject: string }) => m.subject),
    ['receipt mixed', 'receipt 3'],
  );
  assert.is(first.json().data[1].mailboxHash, 'order-3');
  const second = await api('GET', `/inbound/messages?subject=receipt&limit=2&cursor=${first.json().meta.nextCursor}`);
  assert.equal(
    second.json().data.map((m: { subject: string }) => m.subject),
    ['receipt 2', 'receipt 1'],
  );
  const byTo = await api('GET', `/inbound/messages?to=${token}%2Border-2@inbound.mail.example.test`);
  assert.is(byTo.json().data.length, 1);
  const replayStore = await api('POST', `/inbound/messages/${byTo.json().data[0].id}/replay`);
  assert.is(replayStore.statusCode, 409);
  assertErrorBody(replayStore, 409);
  const other = await createWorld(ctx.app);
  assert.is((await api('GET', `/inbound/messages/${byTo.json().data[0].id}`, undefined, other.asKey)).statusCode, 404);
  assert.is(
    (await api('GET', `/inbound/messages/${byTo.json().data[0].id}/raw`, undefined, other.asKey)).statusCode,
    404,
  );

  // Rotation: the old token is refused at RCPT, the routes moved to the new one.
  const rotated = await api('POST', '/inbound/address/rotate');
  const newToken = rotated.json().address.split('@')[0];
  assert.is.not(newToken, token);
  const old = await send([`${token}+late@inbound.mail.example.test`]);
  assert.match(old.output, /<\*\* 550/);
  const fresh = await send([`${newToken}+late@inbound.mail.example.test`]);
  assert.match(fresh.output, /<-  250 /, fresh.output);
});

test('forward route: the message is queued for sending in the transaction that stores it', async () => {
  await addRoute({ address: 'fwd@support.acme.example', action: 'forward', forwardTo: 'desk@elsewhere.example' });
  const run = await send(['fwd@support.acme.example'], ['--header', 'Subject: pass it on']);
  assert.match(run.output, /<-  250 Accepted: routed \(1\)/, run.output);
  const [row] = await q<{ id: string; status: string }>(
    `SELECT id, status FROM inbound_messages WHERE recipient = 'fwd@support.acme.example'`,
  );
  assert.is(row.status, 'forwarded');
  const jobs = await q<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'system'`);
  assert.ok(jobs[0].n >= 1, 'a system-mail job carries the forward');
});

test('a database that cannot answer gives 451 at RCPT TO, never 250 nor 550', async () => {
  const dead = new Sequelize('postgres://svc@127.0.0.1:1/none', {
    dialect: 'postgres',
    logging: false,
    pool: { max: 1, acquire: 2000 },
  });
  const server = createInboundServer({
    config: ctx.config,
    db: { sequelize: dead, url: 'postgres://svc@127.0.0.1:1/none', embedded: true },
    secrets: ctx.deps.secrets,
    log: { info: () => {}, warn: () => {} },
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  try {
    const run = await swaks(port, ['--from', 'ann@sender.example', '--to', 'someone@support.acme.example']);
    assert.match(run.output, /<\*\* 451 Temporary failure looking up the recipient/, run.output);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await dead.close();
  }
});

test('retention: messages past the raw-message horizon go, with their stored attachments', async () => {
  const [old] = await q<{ id: string }>(
    `INSERT INTO inbound_messages (tenant_id, action, status, recipient, size, raw_gzip, parsed, created_at)
     VALUES (:t, 'store', 'stored', 'old@support.acme.example', 1, '\\x00', '{}', now() - interval '400 days')
     RETURNING id`,
    { t: world.tenantId },
  );
  await ctx.db.sequelize.query(
    // The message's own created_at (a JS Date would lose its microseconds), as receive.ts writes both.
    `INSERT INTO inbound_attachments (created_at, tenant_id, inbound_id, sha256, content)
     SELECT created_at, tenant_id, id, 'x', '\\x00' FROM inbound_messages WHERE id = :id`,
    { replacements: { id: old.id } },
  );
  const report = await enforceRetention(ctx.db.sequelize);
  assert.ok(report.rowsDeleted.inbound_messages >= 1, JSON.stringify(report));
  assert.equal(await q(`SELECT id FROM inbound_messages WHERE id = :id`, { id: old.id }), []);
  assert.equal(await q(`SELECT id FROM inbound_attachments WHERE inbound_id = :id`, { id: old.id }), []);
  const kept = await q<{ n: number }>(`SELECT count(*)::int AS n FROM inbound_messages`);
  assert.ok(kept[0].n > 0, 'recent messages stay');
});

test("a message larger than the recipient's plan takes is refused at the end of DATA (552), nothing stored", async () => {
  await addRoute({ address: 'big@support.acme.example', action: 'store' });
  const file = join(scratch, 'big.bin');
  writeFileSync(file, randomBytes(6 * 1024 * 1024));
  const run = await send(
    ['big@support.acme.example'],
    ['--attach-type', 'application/octet-stream', '--attach', `@${file}`],
  );
  assert.match(
    run.output,
    /<\*\* 552 Message exceeds the 5242880 bytes its recipient accepts/,
    run.output.slice(-2000),
  );
  assert.equal(await q(`SELECT id FROM inbound_messages WHERE recipient = 'big@support.acme.example'`), []);
});

test('RCPT TO: a sender past its rate and a tenant past its day get 451, counted in Redis as the API limits', async () => {
  const redis = ctx.deps.redis;
  if (!redis) {
    console.log('  (limits counted in this process: REDIS_URL is not set, nothing to fill from here)');
    return;
  }
  await addRoute({ address: 'limits@support.acme.example', action: 'store' });
  const key = (name: string) => `${ctx.deps.redisPrefix}inbound:rl:${name}`;
  await redis.set(key('from:spammer@sender.example'), '120', 'PX', 60_000);
  const spammer = await swaks(inbound.port, [
    '--from',
    'spammer@sender.example',
    '--to',
    'limits@support.acme.example',
  ]);
  assert.match(spammer.output, /<\*\* 451 Too many messages from <spammer@sender\.example>: at most 120 a minute/);
  assert.not.match(spammer.output, /354/);

  await redis.set(key(`tenant:${world.tenantId}`), '100', 'PX', 60_000);
  try {
    const daily = await send(['limits@support.acme.example']);
    assert.match(daily.output, /<\*\* 451 This recipient's service has received its 100 messages for today/);
  } finally {
    await redis.del(key(`tenant:${world.tenantId}`));
  }
  const ok = await send(['limits@support.acme.example']);
  assert.match(ok.output, /<-  250 /);
  assert.is(await redis.get(key(`tenant:${world.tenantId}`)), '1', 'the stored message counted');
});

test('a delivery skipped because its endpoint was switched off leaves the message failed, and replay sends it once it is on', async () => {
  const hook = await api('POST', '/webhooks/endpoints', { url: receiver.url, events: ['inbound.received'] });
  await addRoute({ address: 'paused@support.acme.example', action: 'webhook', endpointId: hook.json().id });
  await ctx.db.sequelize.query(`UPDATE webhook_endpoints SET enabled = false WHERE id = :id`, {
    replacements: { id: hook.json().id },
  });
  const run = await send(['paused@support.acme.example']);
  assert.match(run.output, /<-  250 /);
  await runDueDeliveries(ctx);
  const [row] = await q<{ id: string; status: string; error: string }>(
    `SELECT id, status, error FROM inbound_messages WHERE recipient = 'paused@support.acme.example'`,
  );
  assert.is(row.status, 'failed');
  assert.match(row.error, /disabled/);
  await ctx.db.sequelize.query(`UPDATE webhook_endpoints SET enabled = true WHERE id = :id`, {
    replacements: { id: hook.json().id },
  });
  assert.is((await api('POST', `/inbound/messages/${row.id}/replay`)).statusCode, 200);
  await runDueDeliveries(ctx);
  const [after] = await q<{ status: string }>(`SELECT status FROM inbound_messages WHERE id = :id`, { id: row.id });
  assert.is(after.status, 'delivered');
});

test.run();
