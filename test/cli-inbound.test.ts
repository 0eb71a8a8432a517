// `svc inbound …` (issue 52 §4) in-process against a real daemon: routes and domains made with the CLI,
// mail delivered by Debian's swaks to the real inbound listener, then listed, shown (parsed and raw),
// followed (`inbound tail --json`), replayed to a real webhook receiver; the token address and its rotation;
// a refusal's message, and no secret in any error. test/helpers/svc-inprocess.ts fails a command that calls
// an operation it does not declare.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { QueryTypes } from 'sequelize';
import { createWorld } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { freePort, swaks } from './helpers/swaks.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { runDueDeliveries, startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { startInboundServer } from '../daemon/smtp/inbound.ts';

let ctx: TestContext;
let cli: InProcessCli;
let dns: TestDnsServer;
let receiver: Receiver;
let inbound: { port: number; stop(): Promise<void> };
let world: Awaited<ReturnType<typeof createWorld>>;
const files = mkdtempSync(join(tmpdir(), 'svc-cli-inbound-'));

test.before(async () => {
  dns = await startDnsServer();
  receiver = await startReceiver();
  const port = await freePort();
  ctx = await createTestContext({
    env: { PUBLIC_URL: 'http://mail.example.test', SMTP_INBOUND_PORT: String(port), DNS_SERVERS: dns.address },
  });
  world = await createWorld(ctx.app);
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  cli.writeProfile({ accessToken: world.owner.token, tenantId: world.tenantId, tenantName: 'Acme' });
  inbound = (await startInboundServer({
    config: ctx.config,
    db: ctx.db,
    secrets: ctx.deps.secrets,
    log: { info: () => {}, warn: () => {} },
    redis: ctx.deps.redis,
    redisPrefix: ctx.deps.redisPrefix,
  }))!;
});
test.after(async () => {
  await inbound?.stop();
  cli?.cleanup();
  rmSync(files, { recursive: true, force: true });
  await ctx?.close();
  await receiver?.close();
  await dns?.close();
});

async function svc(args: string[], env?: Record<string, string | undefined>) {
  const run = await cli.run(args, env ? { env } : {});
  assert.is(run.code, 0, `svc ${args.join(' ')}\n${run.stdout}${run.stderr}`);
  return run;
}

test('domains: add prints the MX to publish, verify checks it, list and show; remove', async () => {
  dns.zone.mx.set('reply.acme.example', [{ exchange: 'mail.example.test', priority: 10 }]);
  const added = await svc(['inbound', 'domains', 'add', 'reply.acme.example']);
  assert.match(added.stdout, /Publish: reply\.acme\.example\. MX 10 mail\.example\.test\./);
  const id = /^id\s+(\S+)/m.exec(added.stdout)![1];
  const verified = await svc(['inbound', 'domains', 'verify', id, '--json']);
  assert.is(verified.json.status, 'verified');
  assert.equal(verified.json.mxFound, ['mail.example.test']);
  const list = await svc(['inbound', 'domains', 'list', '--json']);
  assert.equal(
    list.json.data.map((d: { name: string }) => d.name),
    ['reply.acme.example'],
  );
  assert.match((await svc(['inbound', 'domains', 'show', id])).stdout, /verified/);

  const spare = await svc(['inbound', 'domains', 'add', 'spare.acme.example', '--json']);
  await svc(['inbound', 'domains', 'remove', spare.json.id]);
  assert.is((await svc(['inbound', 'domains', 'list', '--json'])).json.data.length, 1);
});

test('routes: add each action, list in order, edit (position, disable), show, remove; refusals explained', async () => {
  const hook = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: world.asKey,
    payload: { url: receiver.url, events: ['inbound.received'] },
  });
  const endpointId = hook.json().id as string;
  const store = await svc(['inbound', 'routes', 'add', '--match', 'support@reply.acme.example', '--action', 'store']);
  assert.match(store.stdout, /match\s+support@reply\.acme\.example/);
  const webhook = await svc([
    'inbound',
    'routes',
    'add',
    '--match',
    'reply+*@reply.acme.example',
    '--action',
    'webhook',
    '--endpoint',
    endpointId,
    '--max-inline-bytes',
    '1024',
    '--description',
    'replies',
    '--json',
  ]);
  assert.is(webhook.json.endpointId, endpointId);
  assert.is(webhook.json.maxInlineAttachmentBytes, 1024);
  const refuse = await svc([
    'inbound',
    'routes',
    'add',
    '--match',
    '*@reply.acme.example',
    '--action',
    'refuse',
    '--refuse-message',
    'No such mailbox here',
    '--json',
  ]);

  const edited = await svc(['inbound', 'routes', 'edit', refuse.json.id, '--position', '0', '--disable', '--json']);
  assert.is(edited.json.enabled, false);
  assert.is(edited.json.position, 0);
  const list = await svc(['inbound', 'routes', 'list', '--json']);
  const positions = list.json.data.map((r: { position: number }) => r.position);
  assert.equal(
    positions,
    [...positions].sort((a: number, b: number) => a - b),
    'in the order they are tried',
  );
  assert.is(list.json.data[0].position, 0);
  const table = await svc(['inbound', 'routes', 'list']);
  assert.match(table.stdout, /refuse "No such mailbox here"/);
  assert.match(table.stdout, new RegExp(`webhook ${endpointId}`));
  assert.match((await svc(['inbound', 'routes', 'show', webhook.json.id])).stdout, /note\s+replies/);
  const routeRow = async (id: string) =>
    (
      await ctx.db.sequelize.query<{ position: number; enabled: boolean; updated_at: Date }>(
        `SELECT position, enabled, updated_at FROM inbound_routes WHERE tenant_id = :t AND id = :id`,
        { replacements: { t: world.tenantId, id }, type: QueryTypes.SELECT },
      )
    )[0];
  const removed = await svc(['inbound', 'routes', 'remove', refuse.json.id, '--json']);
  assert.equal(removed.json, { id: refuse.json.id, removed: true });
  assert.is(await routeRow(refuse.json.id), undefined, 'the row is gone');
  const left = (await svc(['inbound', 'routes', 'list', '--json'])).json.data;
  assert.equal(left.map((r: { address: string }) => r.address).sort(), [
    'reply+*@reply.acme.example',
    'support@reply.acme.example',
  ]);

  const before = await routeRow(webhook.json.id);
  const nothing = await cli.run(['inbound', 'routes', 'edit', webhook.json.id]);
  assert.is(nothing.code, 2);
  assert.match(nothing.stderr, /Nothing to change/);
  assert.equal(await routeRow(webhook.json.id), before, 'no PATCH was sent');
  // Refused by the API: its message, exit 1, and never the API key that made the call.
  const notOurs = await cli.run(['inbound', 'routes', 'add', '--match', 'a@nobody.example', '--action', 'store'], {
    env: { SVC_API_KEY: world.key.key },
  });
  assert.is(notOurs.code, 1, notOurs.stdout + notOurs.stderr);
  assert.match(notOurs.stderr, /not an inbound domain of this tenant/);
  assert.not.match(notOurs.stdout + notOurs.stderr, world.key.key.slice(-12));
});

test('mail by swaks: messages lists it, show parses it, --raw is the source, tail follows it, replay re-delivers', async () => {
  const attachment = join(files, 'invoice.txt');
  writeFileSync(attachment, 'total: 42 EUR\n');
  const sent = await swaks(inbound.port, [
    '--from',
    'ann@sender.example',
    '--to',
    'support@reply.acme.example',
    '--header',
    'Subject: Where is my order?',
    '--body',
    'It has not come yet.\n\nOn Mon, Acme wrote:\n> Your order shipped',
    '--attach',
    `@${attachment}`,
  ]);
  assert.is(sent.code, 0, sent.output);

  // The listener stores the message before its 250: no waiting.
  const listed = (await svc(['inbound', 'messages', '--subject', 'order', '--json'])).json.data;
  assert.is(listed[0].status, 'stored');
  assert.is(listed[0].recipient, 'support@reply.acme.example');
  const id = listed[0].id as string;
  assert.is((await svc(['inbound', 'messages', '--status', 'failed', '--json'])).json.data.length, 0);
  assert.is((await svc(['inbound', 'messages', '--from', 'ann@sender', '--json'])).json.data[0].id, id);

  const shown = await svc(['inbound', 'show', id]);
  assert.match(shown.stdout, /from\s+ann@sender\.example/);
  assert.match(shown.stdout, /subject\s+Where is my order\?/);
  assert.match(shown.stdout, /verdicts\s+spf=\S+ dkim=none dmarc=\S+ arc=none/);
  assert.match(shown.stdout, /invoice\.txt\s+text\/plain/);
  assert.match(shown.stdout, /It has not come yet\./);
  assert.not.match(shown.stdout, /Your order shipped/, 'the reply without its quote');
  const json = await svc(['inbound', 'show', id, '--json']);
  assert.is(json.json.parsed.attachments[0].filename, 'invoice.txt');
  const raw = await svc(['inbound', 'show', id, '--raw']);
  assert.match(raw.stdout, /^Subject: Where is my order\?\r?$/m);
  assert.match(raw.stdout, /^Content-Disposition: attachment; filename="?invoice\.txt"?/m);

  const dashboard = await svc(['dashboard', '--json']);
  const day = dashboard.json.inbound.value.last24h;
  assert.equal(day, { since: day.since, total: 1, received: 0, delivered: 0, failed: 0, stored: 1, forwarded: 0 });
  assert.equal(dashboard.json.inbound.value.failingEndpoints, []);
  assert.match((await svc(['dashboard'])).stdout, /inbound 24 h\s+1 received, 0 failed/);

  const tailed = await svc(['inbound', 'tail', '--json', '--backlog', '5', '--count', '1', '--timeout', '20']);
  assert.is(JSON.parse(tailed.stdout.trim().split('\n')[0]).id, id);
  const plain = await svc(['inbound', 'tail', '--backlog', '5', '--count', '1', '--timeout', '20']);
  assert.match(plain.stdout, new RegExp(`stored\\s+${id}  ann@sender\\.example → support@reply\\.acme\\.example`));

  // A reply to the webhook route: delivered to the receiver, then replayed by the CLI.
  const reply = await swaks(inbound.port, [
    '--from',
    'bob@sender.example',
    '--to',
    'reply+t42@reply.acme.example',
    '--header',
    'Subject: Re: ticket 42',
  ]);
  assert.is(reply.code, 0, reply.output);
  const replyId = (await svc(['inbound', 'messages', '--to', 'reply+t42@reply.acme.example', '--json'])).json.data[0]
    .id as string;
  await runDueDeliveries(ctx);
  assert.match(receiver.requests.at(-1)!.rawBody, new RegExp(replyId));
  assert.is((await svc(['inbound', 'show', replyId, '--json'])).json.status, 'delivered');
  const before = receiver.requests.length;
  const replayed = await svc(['inbound', 'replay', replyId, '--json']);
  assert.is(replayed.json.id, replyId);
  assert.is(replayed.json.status, 'received');
  assert.ok(replayed.json.eventId, 'a new inbound.received event');
  await runDueDeliveries(ctx);
  assert.is(receiver.requests.length, before + 1);
  assert.match(receiver.requests.at(-1)!.rawBody, new RegExp(replyId));

  // svc inbound stats: GET /inbound/stats as the API answers it, and its tables.
  const stats = await svc(['inbound', 'stats', '--json']);
  const api = (await ctx.app.inject({ method: 'GET', url: '/inbound/stats', headers: world.asKey })).json();
  assert.equal(stats.json.routes, api.routes);
  assert.equal(
    stats.json.routes.map((r: { address: string; last24h: { total: number; stored: number; delivered: number } }) => [
      r.address,
      r.last24h.total,
      r.last24h.stored,
      r.last24h.delivered,
    ]),
    [
      ['reply+*@reply.acme.example', 1, 0, 1],
      ['support@reply.acme.example', 1, 1, 0],
    ],
  );
  assert.equal(
    { ...stats.json.last7d, since: null },
    { since: null, total: 2, received: 0, delivered: 1, failed: 0, stored: 1, forwarded: 0 },
  );
  assert.equal(stats.json.failingEndpoints, []);
  const table = (await svc(['inbound', 'stats'])).stdout;
  assert.match(table, /last 24 h\s+2 \(1 delivered, 0 failed, 0 pending, 1 stored, 0 forwarded\)/);
  assert.match(table, /support@reply\.acme\.example\s+store\s+1\s+0\s+1\s+0/);
  assert.match(table, /No endpoint is failing at inbound mail\./);
});

test('address: the token address, and --rotate replaces it', async () => {
  const first = await svc(['inbound', 'address', '--json']);
  assert.match(first.json.address, /^[a-z2-7]{16}@/);
  assert.is(first.json.rotatedAt, null);
  const rotated = await svc(['inbound', 'address', '--rotate', '--json']);
  assert.is.not(rotated.json.address, first.json.address);
  assert.ok(rotated.json.rotatedAt);
  assert.match((await svc(['inbound', 'address'])).stdout, new RegExp(`address\\s+${rotated.json.address}`));
});

test.run();
