// SSRF guard in production mode: https only, public addresses only, checked at creation and again
// before every attempt (DNS rebinding), with the connection pinned to the checked address.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { drainWebhookDeliveries, startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { emitEvent } from '../daemon/modules/webhooks/events.ts';
import {
  embeddedIPv4,
  isPublicAddress,
  resolveDeliveryTarget,
  UnsafeWebhookUrlError,
} from '../daemon/modules/webhooks/url-guard.ts';
import { emptyZone, startDnsServer } from './helpers/dns-server.ts';
import { loadConfig } from '../daemon/config.ts';

let ctx: TestContext;
let receiver: Receiver;
test.before(async () => {
  ctx = await createTestContext({
    env: { NODE_ENV: 'production', WEBHOOKS_ALLOW_PRIVATE: 'false', WEBHOOK_RETRY_BASE_MS: '20' },
  });
  receiver = await startReceiver();
});
test.after(async () => {
  await receiver?.close();
  await ctx?.close();
});

const production = loadConfig({ NODE_ENV: 'production', WEBHOOKS_ALLOW_PRIVATE: 'false' });

test('production refuses http, loopback, link-local (metadata), private and reserved targets with 400', async () => {
  const { asKey } = await createWorld(ctx.app);
  const refused = [
    'http://127.0.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'https://10.0.0.1/hook',
    'https://127.0.0.1/hook',
    'https://169.254.169.254/hook',
    'https://192.168.1.10/hook',
    'https://172.16.5.4/hook',
    'https://100.64.0.1/hook',
    'https://0.0.0.0/hook',
    'https://localhost/hook',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[fd00::1]/hook',
    'https://[fe80::1]/hook',
    // IPv6 forms that embed a non-public IPv4 address.
    'https://[::127.0.0.1]/hook',
    'https://[::ffff:7f00:1]/hook',
    'https://[::ffff:0:192.168.1.1]/hook',
    'https://[64:ff9b::a00:1]/hook',
    'https://[2002:a9fe:a9fe::1]/hook',
    'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook',
    'http://example.com/hook',
  ];
  for (const url of refused) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/webhooks/endpoints',
      headers: asKey,
      payload: { url, events: ['email.sent'] },
    });
    assert.is(res.statusCode, 400, `${url} → ${res.body}`);
    assert.is(res.json().code, 'VALIDATION_FAILED');
    assert.is(res.json().details[0].field, 'url');
  }
  const count = await ctx.db.sequelize.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhook_endpoints`, {
    type: QueryTypes.SELECT,
  });
  assert.is(count[0].n, 0);
  // A public literal address needs no DNS and is accepted.
  const ok = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: asKey,
    payload: { url: 'https://93.184.215.14/hook', events: ['email.sent'] },
  });
  assert.is(ok.statusCode, 201, ok.body);
});

test('the target is checked again at delivery time: a URL that now points inside is not contacted', async () => {
  const { asKey, tenantId } = await createWorld(ctx.app);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: asKey,
    payload: { url: 'https://93.184.215.14/hook', events: ['email.delivered'] },
  });
  assert.is(created.statusCode, 201);
  // Stand-in for a DNS answer that changed after creation.
  await ctx.db.sequelize.query(`UPDATE webhook_endpoints SET url = :url WHERE id = :id`, {
    replacements: { url: `https://127.0.0.1:${receiver.port}/hooks`, id: created.json().id },
  });
  const eventId = await emitEvent(ctx.db.sequelize, { tenantId, type: 'email.delivered', data: {} });
  await drainWebhookDeliveries(ctx, 10_000);
  assert.is(receiver.requests.length, 0);
  const [delivery] = await ctx.db.sequelize.query<{
    status: string;
    attempt: number;
    status_code: number | null;
    error: string;
  }>(`SELECT * FROM webhook_deliveries WHERE event_id = :eventId`, {
    replacements: { eventId },
    type: QueryTypes.SELECT,
  });
  assert.equal([delivery.status, delivery.attempt, delivery.status_code], ['failed', 5, null]);
  assert.match(delivery.error, /private, loopback or reserved/);
});

test('resolveDeliveryTarget refuses a name with any private answer and pins the checked address', async () => {
  const mixed = async () => [
    { address: '93.184.215.14', family: 4 },
    { address: '10.1.2.3', family: 4 },
  ];
  try {
    await resolveDeliveryTarget('https://rebind.example/hook', production, mixed);
    assert.unreachable('a private answer must be refused');
  } catch (error) {
    assert.instance(error, UnsafeWebhookUrlError);
  }
  const target = await resolveDeliveryTarget('https://hooks.example:8443/in?x=1', production, async () => [
    { address: '93.184.215.14', family: 4 },
  ]);
  assert.is(target.address, '93.184.215.14');
  assert.is(target.hostname, 'hooks.example');
  assert.is(target.url.port, '8443');
  const dev = loadConfig({ NODE_ENV: 'development' });
  const local = await resolveDeliveryTarget('http://127.0.0.1:9/x', dev);
  assert.is(local.address, '127.0.0.1');
});

test('isPublicAddress', () => {
  const table: Array<[string, boolean]> = [
    ['8.8.8.8', true],
    ['93.184.215.14', true],
    ['2606:4700::1111', true],
    ['127.0.0.1', false],
    ['10.255.0.1', false],
    ['172.31.255.255', false],
    ['172.32.0.1', true],
    ['192.168.0.1', false],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['::1', false],
    ['::', false],
    ['fc00::1', false],
    ['fe80::1', false],
    ['::ffff:127.0.0.1', false],
    ['::ffff:7f00:1', false],
    ['::ffff:8.8.8.8', true],
    ['64:ff9b::a00:1', false],
    ['2001:db8::1', false],
    ['not-an-ip', false],
  ];
  for (const [address, expected] of table) assert.is(isPublicAddress(address), expected, address);
});

test('the IPv6 table: every form that embeds an IPv4 address is judged by that address', () => {
  const table: Array<[string, string[], boolean]> = [
    ['::127.0.0.1', ['127.0.0.1'], false],
    ['::ffff:10.1.2.3', ['10.1.2.3'], false],
    ['::ffff:7f00:1', ['127.0.0.1'], false],
    ['::ffff:0:192.168.1.1', ['192.168.1.1'], false],
    ['64:ff9b::169.254.169.254', ['169.254.169.254'], false],
    ['64:ff9b::808:808', ['8.8.8.8'], true],
    ['2002:7f00:1::', ['127.0.0.1'], false],
    ['2002:808:808::1', ['8.8.8.8'], true],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', ['65.54.227.120', '127.0.0.1'], false],
    ['2606:4700::1111', [], true],
  ];
  for (const [address, embedded, isPublic] of table) {
    assert.equal(embeddedIPv4(address), embedded, address);
    assert.is(isPublicAddress(address), isPublic, address);
  }
});

test('with DNS_SERVERS set, names are resolved by those servers (A and AAAA) and every answer is checked', async () => {
  const zone = emptyZone();
  zone.a.set('hooks.example', ['93.184.215.14']);
  zone.aaaa.set('hooks.example', ['::ffff:a00:7']);
  zone.a.set('public.example', ['93.184.215.14']);
  const dns = await startDnsServer(zone);
  try {
    const config = loadConfig({ NODE_ENV: 'production', WEBHOOKS_ALLOW_PRIVATE: 'false', DNS_SERVERS: dns.address });
    try {
      await resolveDeliveryTarget('https://hooks.example/h', config);
      assert.unreachable('a mapped private AAAA answer must be refused');
    } catch (error) {
      assert.instance(error, UnsafeWebhookUrlError);
      assert.match((error as Error).message, /::ffff:(10\.0\.0\.7|a00:7)/);
    }
    const target = await resolveDeliveryTarget('https://public.example/h', config);
    assert.is(target.address, '93.184.215.14');
    assert.ok(
      dns.queries.includes('A public.example') && dns.queries.includes('AAAA hooks.example'),
      dns.queries.join(),
    );
  } finally {
    await dns.close();
  }
});

test.run();
