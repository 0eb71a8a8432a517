// Inbound routing end to end (issue 52), the routes and the webhook path (world: helpers/inbound-routing-
// world.ts): MX verification, route checks, scopes and tenant isolation, refusals at RCPT TO that never
// reach DATA, a webhook route (rows, the signed body, attachments inline and by signed URL, the raw
// source, replay), failing and switched-off endpoints. Limits, store and forward routes, retention:
// inbound-routing-limits.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { createApiKey, createWorld } from './helpers/fixtures.ts';
import { runDueDeliveries } from './helpers/webhook-receiver.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { verifyWebhookSignature } from '../shared/webhooks.ts';
import {
  addRoute,
  api,
  ctx,
  dns,
  endpoint,
  q,
  receiver,
  scratch,
  send,
  setUp,
  tearDown,
  verifiedDomain,
  world,
} from './helpers/inbound-routing-world.ts';

test.before(setUp);
test.after(tearDown);

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
  assert.match(assertErrorBody(badShape, 400, 'VALIDATION_FAILED').message, /address/);
  assert.equal(
    await q(`SELECT id FROM inbound_routes WHERE tenant_id = :t AND match_address LIKE 'a*b@%'`, { t: world.tenantId }),
    [],
  );

  const route = await addRoute({ address: 'scoped@support.acme.example', action: 'store', description: 'scopes' });
  const readOnly = await createApiKey(world.tenantId, { scopes: ['inbound:read'] });
  const noScope = await createApiKey(world.tenantId, { scopes: ['email:send'] });
  const asRead = { authorization: `Bearer ${readOnly.key}` };
  // A read-only key reads what the owner's key reads.
  const readRoutes = await api('GET', '/inbound/routes', undefined, asRead);
  assert.is(readRoutes.statusCode, 200, readRoutes.body);
  assert.equal(readRoutes.json(), (await api('GET', '/inbound/routes')).json());
  assert.equal(
    readRoutes.json().data.find((r: { id: string }) => r.id === route.id),
    route,
  );
  const readMessages = await api('GET', '/inbound/messages', undefined, asRead);
  assert.is(readMessages.statusCode, 200, readMessages.body);
  assert.equal(readMessages.json(), (await api('GET', '/inbound/messages')).json());
  const refused = await api('POST', '/inbound/routes', { address: 'x@support.acme.example', action: 'store' }, asRead);
  assert.match(assertErrorBody(refused, 403).message, /inbound:write/);
  assert.equal(
    await q(`SELECT id FROM inbound_routes WHERE tenant_id = :t AND match_address = 'x@support.acme.example'`, {
      t: world.tenantId,
    }),
    [],
  );
  const unscoped = await api('GET', '/inbound/routes', undefined, { authorization: `Bearer ${noScope.key}` });
  assert.match(assertErrorBody(unscoped, 403).message, /inbound:read/);

  const other = await createWorld(ctx.app);
  assertErrorBody(await api('GET', `/inbound/routes/${route.id}`, undefined, other.asKey), 404, 'NOT_FOUND');
  assertErrorBody(await api('DELETE', `/inbound/routes/${route.id}`, undefined, other.asKey), 404, 'NOT_FOUND');
  const routeRows = () =>
    q<{ enabled: boolean }>(`SELECT enabled FROM inbound_routes WHERE id = :id`, { id: route.id });
  assert.equal(await routeRows(), [{ enabled: true }], "another tenant's DELETE left it");
  assert.equal((await api('GET', '/inbound/routes', undefined, other.asKey)).json().data, []);
  const crossTenant = await api('GET', '/inbound/routes', undefined, { ...other.asKey, 'x-tenant-id': world.tenantId });
  assertErrorBody(crossTenant, 403);
  const patched = await api('PATCH', `/inbound/routes/${route.id}`, { enabled: false });
  assert.is(patched.json().enabled, false);
  assert.equal(await routeRows(), [{ enabled: false }]);
  const removed = await api('DELETE', `/inbound/routes/${route.id}`);
  assert.is(removed.statusCode, 200, removed.body);
  assert.equal(removed.json(), { ok: true });
  assert.equal(await routeRows(), []);
  assertErrorBody(await api('GET', `/inbound/routes/${route.id}`), 404, 'NOT_FOUND');
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
  assert.not.match(unrouted.output, /^<- +354 /m, 'DATA never reached');
  const refused = await send(['closed@support.acme.example']);
  assert.match(refused.output, /<\*\* 550 This mailbox is closed, write to help@acme\.example/);
  assert.not.match(refused.output, /^<- +354 /m);
  const unknownDomain = await send(['x@unverified.example']);
  assert.match(unknownDomain.output, /<\*\* 550/);
  const after = await q<{ n: number }>(`SELECT count(*)::int AS n FROM inbound_messages`);
  assert.is(after[0].n, before[0].n, 'nothing stored');
});

test('IDN: a domain and a route written in Unicode are kept as punycode and take mail to the punycode name', async () => {
  dns.zone.mx.set('xn--bcher-kva.example', [{ exchange: 'mail.example.test', priority: 10 }]);
  const added = await api('POST', '/inbound/domains', { name: 'Bücher.Example.' });
  assert.is(added.statusCode, 201, added.body);
  assert.is(added.json().name, 'xn--bcher-kva.example');
  const verified = await api('POST', `/inbound/domains/${added.json().id}/verify`);
  assert.is(verified.json().status, 'verified', verified.body);
  const route = await addRoute({ address: '*@bücher.example', action: 'store' });
  assert.is(route.address, '*@xn--bcher-kva.example');
  const run = await send(['Kunde@XN--BCHER-KVA.example']);
  assert.match(run.output, /<-  250 /, run.output);
  const rows = await q<{ recipient: string; route_id: string }>(
    `SELECT recipient, route_id FROM inbound_messages WHERE tenant_id = :t AND route_id = :r`,
    { t: world.tenantId, r: route.id },
  );
  assert.equal(rows, [{ recipient: 'Kunde@xn--bcher-kva.example', route_id: route.id }]);
  const bad = await api('POST', '/inbound/domains', { name: 'not a domain' });
  assert.is(bad.statusCode, 400, bad.body);
  assertErrorBody(bad, 400);
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
  // The body is stored once: the delivery's payload is the body as sent (and shown by its log); the
  // event row keeps the same data without the inline contents.
  const [stored] = await q<{ payload: string; data: typeof data }>(
    `SELECT d.payload::text AS payload, e.data FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
      WHERE d.event_id = :e`,
    { e: row.event_id },
  );
  assert.is(stored.payload, request.rawBody, 'the delivery keeps the signed body byte for byte');
  assert.equal(
    stored.data,
    { ...data, attachments: data.attachments.map(({ content: _content, ...meta }) => meta) },
    "the event row: the body's data without inline contents",
  );
  const log = await api('GET', `/webhooks/endpoints/${endpoint.id}/deliveries`);
  const logged = (log.json() as { data: { payload: { data: typeof data } }[] }).data.find(
    (d) => d.payload.data.inboundId === row.id,
  )!;
  assert.equal(logged.payload.data, data, 'the delivery log shows the body with its inline contents');
  assert.match(photo.url!, /^http:\/\/mail\.example\.test\/inbound\/attachments\/[A-Za-z0-9_-]+$/);
  const fetched = await ctx.app.inject({ method: 'GET', url: new URL(photo.url!).pathname });
  assert.is(fetched.statusCode, 200);
  assert.ok(fetched.rawPayload.equals(largeBytes), 'the large attachment by its URL');
  const forged = await ctx.app.inject({ method: 'GET', url: `${new URL(photo.url!).pathname.slice(0, -4)}AAAA` });
  assertErrorBody(forged, 404, 'NOT_FOUND');
  assert.not.match(forged.body, /tenant|[0-9a-f]{8}-[0-9a-f]{4}-/, 'a forged link learns nothing');

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
  const replayedBody = JSON.parse(receiver.requests[count].rawBody) as { id: string; data: Record<string, unknown> };
  assert.is(replayedBody.id, replay.json().eventId);
  assert.equal(replayedBody.data, { ...data, replayOf: row.event_id }, "the original body's data, inline contents too");
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
  const replayed = await api('POST', `/inbound/messages/${row.id}/replay`);
  assert.is(replayed.statusCode, 200, replayed.body);
  const [pending] = await q<{ status: string; event_id: string }>(
    `SELECT status, event_id FROM inbound_messages WHERE id = :id`,
    { id: row.id },
  );
  assert.equal(replayed.json(), { id: row.id, status: 'received', eventId: pending.event_id });
  assert.is(pending.status, 'received');
  const [delivery] = await q<{ endpoint_id: string; status: string }>(
    `SELECT endpoint_id, status FROM webhook_deliveries WHERE event_id = :e`,
    { e: pending.event_id },
  );
  assert.equal(delivery, { endpoint_id: hook.json().id, status: 'pending' });
  await runDueDeliveries(ctx);
  const [after] = await q<{ status: string; error: string | null }>(
    `SELECT status, error FROM inbound_messages WHERE id = :id`,
    { id: row.id },
  );
  assert.equal(after, { status: 'delivered', error: null });
});

test.run();
