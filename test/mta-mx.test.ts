// Routing of direct delivery against the project's real DNS server: MX by preference, the implicit
// MX (A/AAAA) only when the domain has no MX, null MX and NXDOMAIN permanent, a DNS timeout or
// SERVFAIL a deferral that never falls back to A, and routes cached by their TTL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startDnsServer, startSilentDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { createDnsClient, type DnsClient } from '../daemon/mta/dns-query.ts';
import { resolveRoute, RouteCache, type Route } from '../daemon/mta/mx.ts';

let dns: TestDnsServer;
let client: DnsClient;

test.before(async () => {
  dns = await startDnsServer();
  client = createDnsClient({ servers: [dns.address], timeoutMs: 300 });
  const { zone } = dns;
  zone.mx.set('pref.test', [
    { exchange: 'backup.pref.test', priority: 20 },
    { exchange: 'one.pref.test', priority: 10 },
    { exchange: 'two.pref.test', priority: 10 },
  ]);
  zone.a.set('backup.pref.test', ['127.0.0.30']);
  zone.a.set('one.pref.test', ['127.0.0.31']);
  zone.a.set('two.pref.test', ['127.0.0.32']);
  zone.aaaa.set('two.pref.test', ['::1']);
  // No MX at all, only addresses: the implicit MX.
  zone.a.set('bare.test', ['127.0.0.40']);
  zone.aaaa.set('bare.test', ['::1']);
  zone.mx.set('nullmx.test', [{ exchange: '.', priority: 0 }]);
  zone.a.set('nullmx.test', ['127.0.0.41']);
  // The MX look-up is never answered, but the domain has an A record the resolver must not fall back to.
  zone.silent.add('slow.test');
  zone.a.set('slow.test', ['127.0.0.42']);
  zone.servfail.add('broken.test');
  zone.mx.set('ghost-hosts.test', [{ exchange: 'nowhere.ghost-hosts.test', priority: 10 }]);
  zone.mx.set('slow-host.test', [{ exchange: 'mx.slow-host.test', priority: 10 }]);
  zone.silent.add('mx.slow-host.test');
  zone.mx.set('half.test', [
    { exchange: 'gone.half.test', priority: 10 },
    { exchange: 'there.half.test', priority: 20 },
  ]);
  zone.a.set('there.half.test', ['127.0.0.43']);
});

test.after(async () => {
  await dns.close();
});

function hosts(route: Route) {
  if (route.kind !== 'hosts') throw new Error(`expected hosts, got ${JSON.stringify(route)}`);
  return route.hosts;
}

test('MX hosts by preference, every host of a preference before the next, with A and AAAA', async () => {
  const orders = new Set<string>();
  for (let i = 0; i < 12; i++) {
    const route = await resolveRoute(client, 'pref.test');
    const found = hosts(route);
    assert.is(found[2].name, 'backup.pref.test', 'the higher preference value comes last');
    orders.add(found.map((host) => host.name).join(','));
    assert.equal(found.find((host) => host.name === 'two.pref.test')?.addresses, ['127.0.0.32', '::1']);
    assert.is((route as { implicit: boolean }).implicit, false);
  }
  assert.equal(
    [...orders].sort(),
    ['one.pref.test,two.pref.test,backup.pref.test', 'two.pref.test,one.pref.test,backup.pref.test'],
    'equal preferences are shuffled (RFC 5321 §5.1), so both orders show up in 12 tries',
  );
});

test('no MX: the domain itself is the host (RFC 5321 implicit MX), IPv4 and IPv6', async () => {
  const route = await resolveRoute(client, 'bare.test');
  assert.equal(route, {
    kind: 'hosts',
    implicit: true,
    authentic: false,
    hosts: [{ name: 'bare.test', priority: 0, addresses: ['127.0.0.40', '::1'] }],
    ttlSeconds: 60,
  });
});

test('null MX and NXDOMAIN are permanent, with their enhanced codes', async () => {
  const nullMx = await resolveRoute(client, 'nullmx.test');
  assert.is(nullMx.kind, 'undeliverable');
  assert.is((nullMx as { enhancedCode: string }).enhancedCode, '5.1.10');
  assert.not.ok(dns.queries.includes('A nullmx.test'), 'a null MX is final: its A record is not looked at');
  const missing = await resolveRoute(client, 'no-such-domain.test');
  assert.is(missing.kind, 'undeliverable');
  assert.is((missing as { enhancedCode: string }).enhancedCode, '5.1.2');
  const ghosts = await resolveRoute(client, 'ghost-hosts.test');
  assert.is(ghosts.kind, 'undeliverable', 'MX hosts that do not exist');
});

test('a DNS timeout or SERVFAIL defers and never falls back to the A record', async () => {
  const started = Date.now();
  const slow = await resolveRoute(client, 'slow.test');
  assert.equal(slow, { kind: 'deferred', reason: 'MX of slow.test: DNS timeout' });
  assert.ok(Date.now() - started < 2000, 'bounded by the timeout');
  assert.not.ok(dns.queries.includes('A slow.test'), 'no fallback to A after a timed-out MX look-up');
  assert.equal(await resolveRoute(client, 'broken.test'), { kind: 'deferred', reason: 'MX of broken.test: ESERVFAIL' });
  const slowHost = await resolveRoute(client, 'slow-host.test');
  assert.equal(slowHost, { kind: 'deferred', reason: 'address of mx.slow-host.test: DNS timeout' });
  // One MX host missing is skipped; the others still carry the mail.
  assert.equal(
    hosts(await resolveRoute(client, 'half.test')).map((host) => host.name),
    ['there.half.test'],
  );
});

test('a resolver that never answers defers; a second server is asked when the first is silent', async () => {
  const silent = await startSilentDnsServer();
  try {
    const onlySilent = createDnsClient({ servers: [silent.address], timeoutMs: 200 });
    assert.is((await resolveRoute(onlySilent, 'bare.test')).kind, 'deferred');
    const withBackup = createDnsClient({ servers: [silent.address, dns.address], timeoutMs: 200 });
    assert.is(hosts(await resolveRoute(withBackup, 'bare.test'))[0].addresses[0], '127.0.0.40');
  } finally {
    await silent.close();
  }
});

test('routes are cached by TTL; deferrals are not cached', async () => {
  const cache = new RouteCache(client);
  dns.zone.mx.set('cached.test', [{ exchange: 'mx.cached.test', priority: 10 }]);
  dns.zone.a.set('mx.cached.test', ['127.0.0.50']);
  const before = dns.queries.length;
  await cache.route('cached.test');
  const asked = dns.queries.length - before;
  assert.is(asked, 3, 'MX, then A and AAAA of the one host');
  dns.zone.a.set('mx.cached.test', ['127.0.0.51']);
  assert.is(hosts(await cache.route('Cached.Test.'))[0].addresses[0], '127.0.0.50', 'kept for the 60 s TTL');
  assert.is(dns.queries.length - before, asked, 'no new question');
  dns.zone.silent.add('later.test');
  assert.is((await cache.route('later.test')).kind, 'deferred');
  dns.zone.silent.delete('later.test');
  dns.zone.a.set('later.test', ['127.0.0.52']);
  assert.is(hosts(await cache.route('later.test'))[0].addresses[0], '127.0.0.52', 'a deferral is asked again');
});

test.run();
