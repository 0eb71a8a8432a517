// MTA-STS (RFC 8461) end to end on loopback: the TXT record in the project's DNS server, the policy
// from an HTTPS server under a test CA on port 443, MX hosts with good, self-signed, expired, misnamed
// or no certificates. `enforce` delivers only over valid TLS to a listed MX and defers otherwise;
// `testing` delivers and reports; the policy is cached by max_age and refetched when its id changes.
import { createServer, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { freeLoopbackAddress, startMxHost, type MxHost } from './helpers/mx-host.ts';
import { createTestCa, type TestCa } from './helpers/test-ca.ts';
import { makeSelfSignedPair } from './helpers/certificates.ts';
import { createDnsClient } from '../daemon/mta/dns-query.ts';
import { parseStsPolicy, stsAllowsHost, stsRecordId } from '../daemon/mta/mta-sts.ts';
import { TlsPolicy } from '../daemon/mta/tls-policy.ts';
import { DEFAULT_POOL_LIMITS, DestinationPool } from '../daemon/mta/pool.ts';
import type { Route } from '../daemon/mta/mx.ts';

let dns: TestDnsServer;
let ca: TestCa;
let policyServer: Server;
const policies = new Map<string, { status?: number; body: string }>();
const policyRequests: string[] = [];
const sinks: Record<string, MxHost> = {};
const pools: DestinationPool[] = [];

const ENFORCE = [
  'version: STSv1',
  'mode: enforce',
  'mx: mx-good.enforce.test',
  'mx: mx-self.enforce.test',
  'mx: mx-plain.enforce.test',
  'mx: mx-expired.enforce.test',
  'mx: *.wild.enforce.test',
  'max_age: 86400',
].join('\r\n');

test.before(async () => {
  dns = await startDnsServer();
  ca = createTestCa();
  const policyAddress = await freeLoopbackAddress();
  const policyPair = ca.issue('policy', ['mta-sts.enforce.test', 'mta-sts.testing.test', 'mta-sts.broken.test']);
  policyServer = createServer(
    { cert: readFileSync(policyPair.cert), key: readFileSync(policyPair.key) },
    (req, res) => {
      const host = String(req.headers.host).replace(/:\d+$/, '');
      policyRequests.push(`${host}${req.url}`);
      const policy = req.url === '/.well-known/mta-sts.txt' ? policies.get(host) : undefined;
      if (!policy) return res.writeHead(404).end();
      res.writeHead(policy.status ?? 200, { 'content-type': 'text/plain' }).end(policy.body);
    },
  );
  await new Promise<void>((resolve) => policyServer.listen(443, policyAddress, resolve));
  policies.set('mta-sts.enforce.test', { body: ENFORCE });
  policies.set('mta-sts.testing.test', {
    body: 'version: STSv1\nmode: testing\nmx: mx-self.testing.test\nmax_age: 600\n',
  });
  policies.set('mta-sts.broken.test', { body: 'version: STSv1\nmode: enforce\n' });
  for (const domain of ['enforce.test', 'testing.test', 'broken.test']) {
    dns.zone.txt.set(`_mta-sts.${domain}`, ['v=STSv1; id=20260101']);
    dns.zone.a.set(`mta-sts.${domain}`, [policyAddress]);
  }
  const dir = ca.dir;
  const selfSigned = makeSelfSignedPair(dir, 'self', 'mx-self.enforce.test');
  sinks.good = await startMxHost({ tls: ca.issue('good', ['mx-good.enforce.test', 'mx.unlisted.test']) });
  sinks.self = await startMxHost({ tls: selfSigned });
  sinks.plain = await startMxHost();
  sinks.expired = await startMxHost({ tls: ca.issue('expired', ['mx-expired.enforce.test'], { expired: true }) });
  sinks.wrongName = await startMxHost({ tls: ca.issue('wrong', ['someone-else.test']) });
  sinks.wild = await startMxHost({ tls: ca.issue('wild', ['a.wild.enforce.test']) });
});

test.after(async () => {
  for (const pool of pools) pool.close();
  await Promise.all(Object.values(sinks).map((sink) => sink.close()));
  await new Promise((resolve) => policyServer.close(resolve));
  await dns.close();
});

function route(name: string, sink: MxHost): Extract<Route, { kind: 'hosts' }> {
  return {
    kind: 'hosts',
    implicit: false,
    authentic: false,
    ttlSeconds: 60,
    hosts: [{ name, priority: 10, addresses: [sink.address] }],
  };
}

async function send(tlsPolicy: TlsPolicy, domain: string, host: string, sink: MxHost) {
  const destination = await tlsPolicy.forDestination(domain, route(host, sink));
  const before = sink.messages.length;
  // A pool per destination, as the MTA keeps them (these hosts are different destinations).
  const pool = new DestinationPool(DEFAULT_POOL_LIMITS, { ehloName: 'mta.svc.test', socketTimeoutMs: 3000 });
  pools.push(pool);
  const report = await pool.deliver(
    route(host, sink).hosts,
    destination.plan,
    { from: 'bounce@rp.svc.test', to: [`user@${domain}`] },
    Buffer.from(`Subject: sts\r\n\r\nvia ${host}\r\n`),
  );
  return {
    verdict: report.recipients[0].verdict,
    // Each attempt names the address it connected to (TLS-RPT's receiving-ip).
    tls: report.tlsAttempts.map(({ address, ...attempt }) => (assert.is(address, sink.address), attempt)),
    received: sink.messages.length - before,
    secure: sink.messages.at(-1)?.secure,
    policy: destination.policyOf(host),
  };
}

test('records and policies are read as RFC 8461 says', () => {
  assert.is(stsRecordId(['v=STSv1; id=abc123;']), 'abc123');
  assert.is(stsRecordId(['v=STSv1; id=a', 'v=STSv1; id=b']), null, 'two records: no policy');
  assert.is(stsRecordId(['v=spf1 -all']), null);
  const policy = parseStsPolicy(ENFORCE)!;
  assert.equal([policy.mode, policy.maxAgeSeconds, policy.mx.length], ['enforce', 86400, 5]);
  assert.ok(stsAllowsHost(policy, 'a.wild.enforce.test'));
  assert.not.ok(stsAllowsHost(policy, 'a.b.wild.enforce.test'), 'the wildcard is one label');
  assert.not.ok(stsAllowsHost(policy, 'wild.enforce.test'));
  assert.is(parseStsPolicy('version: STSv1\nmode: enforce\nmax_age: 10\n'), null, 'enforce without mx');
});

test('enforce: valid TLS to a listed MX delivers; every other case defers with its RFC 8460 result', async () => {
  const tlsPolicy = new TlsPolicy(createDnsClient({ servers: [dns.address] }), { ca: [ca.certPem] });
  const good = await send(tlsPolicy, 'enforce.test', 'mx-good.enforce.test', sinks.good);
  assert.equal([good.verdict.kind, good.received, good.secure], ['delivered', 1, true]);
  assert.equal(good.tls, [{ host: 'mx-good.enforce.test', failure: null }]);
  assert.is(good.policy.type, 'sts');
  assert.ok(good.policy.strings.includes('mode: enforce'));
  const wild = await send(tlsPolicy, 'enforce.test', 'a.wild.enforce.test', sinks.wild);
  assert.is(wild.verdict.kind, 'delivered', 'a wildcard-listed MX');

  const cases: [string, MxHost, string][] = [
    ['mx-self.enforce.test', sinks.self, 'certificate-not-trusted'],
    ['mx-plain.enforce.test', sinks.plain, 'starttls-not-supported'],
    ['mx-expired.enforce.test', sinks.expired, 'certificate-expired'],
    ['x.wild.enforce.test', sinks.wrongName, 'certificate-host-mismatch'],
  ];
  for (const [host, sink, failure] of cases) {
    const result = await send(tlsPolicy, 'enforce.test', host, sink);
    assert.is(result.verdict.kind, 'deferred', host);
    assert.is(result.received, 0, `${host}: nothing handed over without valid TLS`);
    assert.equal(result.tls, [{ host, failure }], host);
  }
  const unlisted = await send(tlsPolicy, 'enforce.test', 'mx.unlisted.test', sinks.good);
  assert.is(unlisted.verdict.kind, 'deferred');
  assert.match(unlisted.verdict.response, /not an MX host the policy lists/);
  assert.is(unlisted.received, 0);
  assert.is(
    policyRequests.filter((r) => r === 'mta-sts.enforce.test/.well-known/mta-sts.txt').length,
    1,
    'one fetch for all these deliveries: the policy is cached',
  );
});

test('testing: delivery goes on over bad TLS, and the failure is reported', async () => {
  const tlsPolicy = new TlsPolicy(createDnsClient({ servers: [dns.address] }), { ca: [ca.certPem] });
  const result = await send(tlsPolicy, 'testing.test', 'mx-self.testing.test', sinks.self);
  assert.equal([result.verdict.kind, result.received], ['delivered', 1]);
  assert.equal(result.tls, [{ host: 'mx-self.testing.test', failure: 'certificate-not-trusted' }]);
  const plain = await send(tlsPolicy, 'testing.test', 'mx-self.testing.test', sinks.plain);
  assert.equal([plain.verdict.kind, plain.received, plain.secure], ['delivered', 1, false]);
  assert.equal(plain.tls, [{ host: 'mx-self.testing.test', failure: 'starttls-not-supported' }]);
});

test('no record: opportunistic; an invalid policy or failed fetch is reported and not enforced', async () => {
  const tlsPolicy = new TlsPolicy(createDnsClient({ servers: [dns.address] }), { ca: [ca.certPem] });
  const none = await send(tlsPolicy, 'nopolicy.test', 'mx.nopolicy.test', sinks.self);
  assert.equal([none.verdict.kind, none.secure, none.policy.type], ['delivered', true, 'no-policy-found']);
  const broken = await send(tlsPolicy, 'broken.test', 'mx.broken.test', sinks.plain);
  assert.is(broken.verdict.kind, 'delivered');
  assert.equal([broken.policy.type, broken.policy.lookupFailure], ['sts', 'sts-policy-invalid']);
  // A policy host under a CA we do not trust.
  const untrusting = new TlsPolicy(createDnsClient({ servers: [dns.address] }));
  const lookup = await untrusting.sts.lookup('enforce.test');
  assert.equal([lookup.kind, (lookup as { failure?: string }).failure], ['failed', 'sts-webpki-invalid']);
});

test('the cache: kept for max_age, refetched when the id changes, kept when the fetch fails', async () => {
  let clock = Date.now();
  const { StsPolicyCache } = await import('../daemon/mta/mta-sts.ts');
  const cache = new StsPolicyCache(createDnsClient({ servers: [dns.address] }), { ca: [ca.certPem], now: () => clock });
  const txtQueries = (domain: string) => dns.queries.filter((q) => q === `TXT _mta-sts.${domain}`).length;
  const asked = txtQueries('testing.test');
  assert.is((await cache.lookup('testing.test')).kind, 'policy');
  assert.is((await cache.lookup('testing.test')).kind, 'policy');
  assert.is(cache.fetches, 1, 'same id: no new fetch');
  assert.is(txtQueries('testing.test'), asked + 1, 'the TXT record is kept for its TTL (60 s here)');
  dns.zone.txt.set('_mta-sts.testing.test', ['v=STSv1; id=20260102']);
  policies.set('mta-sts.testing.test', { body: 'version: STSv1\nmode: enforce\nmx: mx.testing.test\nmax_age: 600\n' });
  assert.is((await cache.lookup('testing.test')).kind, 'policy');
  assert.is(cache.fetches, 1, 'the new id is not seen before the TTL runs out');
  clock += 61_000;
  const changed = await cache.lookup('testing.test');
  assert.equal([cache.fetches, changed.kind === 'policy' && changed.policy.mode], [2, 'enforce']);
  // The policy host goes away and the record too: the cached enforce policy stands until max_age.
  policies.delete('mta-sts.testing.test');
  dns.zone.txt.set('_mta-sts.testing.test', ['v=STSv1; id=20260103']);
  clock += 61_000;
  const kept = await cache.lookup('testing.test');
  assert.equal([cache.fetches, kept.kind === 'policy' && kept.policy.mode], [3, 'enforce']);
  dns.zone.txt.delete('_mta-sts.testing.test');
  clock += 61_000;
  assert.is((await cache.lookup('testing.test')).kind, 'policy', 'a missing record does not end a cached policy');
  clock += 601_000;
  assert.is((await cache.lookup('testing.test')).kind, 'none', 'after max_age it is gone');
});

test('no record is kept too, for five minutes: one TXT query for a burst of messages to a domain without MTA-STS', async () => {
  let clock = Date.now();
  const { StsPolicyCache } = await import('../daemon/mta/mta-sts.ts');
  const cache = new StsPolicyCache(createDnsClient({ servers: [dns.address] }), { ca: [ca.certPem], now: () => clock });
  const txtQueries = () => dns.queries.filter((q) => q === 'TXT _mta-sts.plain-burst.test').length;
  for (let i = 0; i < 20; i++) assert.is((await cache.lookup('plain-burst.test')).kind, 'none');
  assert.is(txtQueries(), 1);
  // Published meanwhile (its policy host does not exist): seen once the negative answer has run out.
  dns.zone.txt.set('_mta-sts.plain-burst.test', ['v=STSv1; id=1']);
  clock += 299_000;
  assert.is((await cache.lookup('plain-burst.test')).kind, 'none');
  clock += 2_000;
  const found = await cache.lookup('plain-burst.test');
  assert.equal(
    [found.kind, (found as { failure?: string }).failure, txtQueries()],
    ['failed', 'sts-policy-fetch-error', 2],
  );
});

test.run();
