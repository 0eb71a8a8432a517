// DANE (RFC 7672) against a real validating resolver: unbound over zones signed with ldns-signzone.
// TLSA records count only from authenticated answers behind a signed MX; DANE-EE pins the server's key
// (self-signed is fine), DANE-TA pins an authority in the chain and checks the name; a mismatch or no
// STARTTLS defers; a bogus zone defers; TLSA in an unsigned zone is ignored (opportunistic).
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSelfSignedPair } from './helpers/certificates.ts';
import { startMxHost, type MxHost } from './helpers/mx-host.ts';
import { createTestCa } from './helpers/test-ca.ts';
import { startValidatingResolver, type ValidatingResolver } from './helpers/validating-resolver.ts';
import { createDnsClient, type DnsClient } from '../daemon/mta/dns-query.ts';
import { lookupTlsa } from '../daemon/mta/dane.ts';
import { resolveRoute } from '../daemon/mta/mx.ts';
import { TlsPolicy } from '../daemon/mta/tls-policy.ts';
import { DEFAULT_POOL_LIMITS, DestinationPool } from '../daemon/mta/pool.ts';

let resolver: ValidatingResolver;
let dns: DnsClient;
const sinks: Record<string, MxHost> = {};
const pools: DestinationPool[] = [];

function spkiSha256(certFile: string): string {
  const certificate = new X509Certificate(readFileSync(certFile));
  return createHash('sha256')
    .update(certificate.publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex');
}

test.before(async () => {
  const ca = createTestCa();
  const ee = makeSelfSignedPair(ca.dir, 'ee', 'anything.example');
  const other = makeSelfSignedPair(ca.dir, 'other', 'other.example');
  const taLeaf = ca.issue('ta', ['mx-ta.dane.test']);
  const taWrongName = ca.issue('ta-wrong', ['someone-else.test']);
  // DANE-TA needs the authority in the chain the server sends: leaf then CA.
  const withChain = (pair: { cert: string; key: string }, name: string) => {
    const cert = join(ca.dir, `${name}.chain.crt`);
    writeFileSync(cert, readFileSync(pair.cert, 'utf8') + ca.certPem);
    return { cert, key: pair.key };
  };
  sinks.ee = await startMxHost({ tls: ee });
  sinks.eeWrong = await startMxHost({ tls: other });
  sinks.ta = await startMxHost({ tls: withChain(taLeaf, 'ta') });
  sinks.taName = await startMxHost({ tls: withChain(taWrongName, 'ta-wrong') });
  sinks.plain = await startMxHost();
  const caSha256 = createHash('sha256').update(new X509Certificate(ca.certPem).raw).digest('hex');
  const host = (label: string, sink: MxHost, tlsa: string) => [
    `${label} IN MX 10 mx-${label}.dane.test.`,
    `mx-${label} IN A ${sink.address}`,
    `_25._tcp.mx-${label} IN TLSA ${tlsa}`,
  ];
  resolver = await startValidatingResolver([
    {
      name: 'dane.test',
      kind: 'signed',
      records: [
        ...host('ee', sinks.ee, `3 1 1 ${spkiSha256(ee.cert)}`),
        ...host('eewrong', sinks.eeWrong, `3 1 1 ${spkiSha256(ee.cert)}`),
        ...host('ta', sinks.ta, `2 0 1 ${caSha256}`),
        ...host('taname', sinks.taName, `2 0 1 ${caSha256}`),
        ...host('plain', sinks.plain, `3 1 1 ${spkiSha256(ee.cert)}`),
        // PKIX-EE (usage 1) is unusable for SMTP: TLS mandatory, not authenticated (RFC 7672 §3.1.3).
        ...host('pkix', sinks.eeWrong, `1 1 1 ${spkiSha256(ee.cert)}`),
      ],
    },
    {
      name: 'unsigned.test',
      kind: 'unsigned',
      records: [
        '@ IN MX 10 mx.unsigned.test.',
        `mx IN A ${sinks.eeWrong.address}`,
        `_25._tcp.mx IN TLSA 3 1 1 ${'00'.repeat(32)}`,
      ],
    },
    { name: 'bogus.test', kind: 'bogus', records: ['@ IN MX 10 mx.bogus.test.', `mx IN A ${sinks.ee.address}`] },
  ]);
  dns = createDnsClient({ servers: [resolver.address], timeoutMs: 2000 });
});

test.after(async () => {
  for (const pool of pools) pool.close();
  await Promise.all(Object.values(sinks).map((sink) => sink.close()));
  await resolver.close();
});

async function deliver(domain: string) {
  const route = await resolveRoute(dns, domain);
  if (route.kind !== 'hosts') return { route, verdict: null, tls: [], received: 0, policy: null };
  const tls = await new TlsPolicy(dns).forDestination(domain, route);
  const pool = new DestinationPool(DEFAULT_POOL_LIMITS, { ehloName: 'mta.svc.test', socketTimeoutMs: 3000 });
  pools.push(pool);
  const sink = Object.values(sinks).find((s) => s.address === route.hosts[0].addresses[0])!;
  const before = sink.messages.length;
  const report = await pool.deliver(
    route.hosts,
    tls.plan,
    { from: 'bounce@rp.svc.test', to: [`user@${domain}`] },
    Buffer.from('Subject: dane\r\n\r\nhello\r\n'),
  );
  return {
    route,
    verdict: report.recipients[0].verdict,
    // Each attempt names the address it connected to (TLS-RPT's receiving-ip).
    tls: report.tlsAttempts.map(({ address, ...attempt }) => (assert.is(address, sink.address), attempt)),
    received: sink.messages.length - before,
    secure: sink.messages.at(-1)?.secure,
    policy: tls.policyOf(route.hosts[0].name),
  };
}

test('authenticated answers carry AD; TLSA from an unsigned zone is not believed', async () => {
  const signed = await lookupTlsa(dns, 'mx-ee.dane.test');
  assert.is(signed.kind, 'dane');
  const unsigned = await dns.query('_25._tcp.mx.unsigned.test', 'TLSA');
  assert.equal([unsigned.kind, 'authentic' in unsigned && unsigned.authentic], ['answer', false]);
  assert.equal(await lookupTlsa(dns, 'mx.unsigned.test'), { kind: 'none' });
  const bogus = await resolveRoute(dns, 'bogus.test');
  assert.equal(bogus, { kind: 'deferred', reason: 'MX of bogus.test: ESERVFAIL' }, 'bogus DNSSEC defers');
});

test('DANE-EE: the pinned key is enough (self-signed, any name); another key defers', async () => {
  const good = await deliver('ee.dane.test');
  assert.is(good.route.kind === 'hosts' && good.route.authentic, true);
  assert.equal([good.verdict?.kind, good.received, good.secure], ['delivered', 1, true]);
  assert.equal(good.tls, [{ host: 'mx-ee.dane.test', failure: null }]);
  assert.is(good.policy?.type, 'tlsa');
  const wrong = await deliver('eewrong.dane.test');
  assert.equal([wrong.verdict?.kind, wrong.received], ['deferred', 0]);
  assert.equal(wrong.tls, [{ host: 'mx-eewrong.dane.test', failure: 'validation-failure' }]);
});

test('DANE-TA: an authority in the chain and the MX name on the leaf; the wrong name defers', async () => {
  const good = await deliver('ta.dane.test');
  assert.equal([good.verdict?.kind, good.received], ['delivered', 1]);
  const misnamed = await deliver('taname.dane.test');
  assert.equal([misnamed.verdict?.kind, misnamed.received], ['deferred', 0]);
  assert.equal(misnamed.tls, [{ host: 'mx-taname.dane.test', failure: 'certificate-host-mismatch' }]);
});

test('DANE makes TLS mandatory: no STARTTLS defers; unusable records still demand TLS', async () => {
  const plain = await deliver('plain.dane.test');
  assert.equal([plain.verdict?.kind, plain.received], ['deferred', 0]);
  assert.equal(plain.tls, [{ host: 'mx-plain.dane.test', failure: 'starttls-not-supported' }]);
  const pkix = await deliver('pkix.dane.test');
  assert.equal([pkix.verdict?.kind, pkix.received, pkix.secure], ['delivered', 1, true]);
  const unsigned = await deliver('unsigned.test');
  assert.equal([unsigned.verdict?.kind, unsigned.received], ['delivered', 1], 'unsigned TLSA ignored');
  assert.is(unsigned.policy?.type, 'no-policy-found');
});

test.run();
