// `svc doctor` with DELIVERY=direct (issue 49 §1): it used to say "mail is captured" while the node
// delivered to MX hosts, and checked nothing direct delivery needs. Now each check knows the delivery
// mode, and the node checks what receivers look at: the EHLO name, forward-confirmed reverse DNS of
// its outbound address, the resolver and DNSSEC, port 25, SPF, DMARC/MTA-STS/TLS-RPT. All of it
// against the test DNS server and an MX host on a loopback alias: no test reaches a public address.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { freeLoopbackAddress, startMxHost, type MxHost } from './helpers/mx-host.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { addVerifiedDomain, createAdmin, createTenant } from './helpers/fixtures.ts';
import { startValidatingResolver } from './helpers/validating-resolver.ts';
import { directDeliveryChecks } from '../daemon/modules/doctor/direct-delivery.ts';
import { checkDnssec } from '../daemon/modules/doctor/network-checks.ts';
import { createDnsClient } from '../daemon/mta/dns-query.ts';

let dns: TestDnsServer;
let mx: MxHost;

test.before(async () => {
  dns = await startDnsServer();
  mx = await startMxHost();
  // The "well-known" domain the doctor probes: its MX is an MX host on loopback.
  dns.zone.mx.set('probe.test', [{ exchange: 'mx.probe.test', priority: 10 }]);
  dns.zone.a.set('mx.probe.test', [mx.address]);
});

test.after(async () => {
  await Promise.all([mx?.close(), dns?.close()]);
});

type Check = { name: string; ok: boolean; message: string; fix?: string };
const byName = (checks: Check[]) => Object.fromEntries(checks.map((check) => [check.name, check]));

const DIRECT_ENV = (extra: Record<string, string>) => ({
  DELIVERY: 'direct',
  ROLE: 'all',
  DOCTOR_PROBE_DOMAIN: 'probe.test',
  DOCTOR_DNSSEC_PROBE: 'signed.test',
  ...extra,
});

async function matchersOf(ctx: TestContext) {
  return operationMatchers((await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json());
}

/** `svc doctor --json` and `svc doctor` as a platform admin against this context's app. */
async function doctor(ctx: TestContext) {
  const url = await listen(ctx);
  const admin = await createAdmin(ctx.app, { platformAdmin: true });
  const cli = new InProcessCli(url, await matchersOf(ctx));
  cli.writeProfile({ accessToken: admin.token, refreshToken: 'unused' });
  try {
    const json = await cli.run(['doctor', '--json']);
    const human = await cli.run(['doctor']);
    return { json, human, admin };
  } finally {
    cli.cleanup();
  }
}

test('a host with direct delivery misconfigured: every problem receivers see is a line with its fix', async () => {
  const ctx = await createTestContext({
    env: DIRECT_ENV({ DNS_SERVERS: dns.address, PUBLIC_URL: 'http://127.0.0.1:3000' }),
  });
  try {
    const { json, human, admin } = await doctor(ctx);
    const tenantId = await createTenant(admin.id, 'Acme');
    await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, tenantId, 'acme.test');
    const again = await (async () => {
      const cli = new InProcessCli(
        `http://127.0.0.1:${(ctx.app.server.address() as { port: number }).port}`,
        await matchersOf(ctx),
      );
      cli.writeProfile({ accessToken: admin.token, refreshToken: 'unused' });
      const run = await cli.run(['doctor', '--json']);
      cli.cleanup();
      return run;
    })();
    assert.is(json.code, 1, json.stdout + json.stderr);
    assert.equal(json.json.node.delivery, 'direct');
    assert.equal(json.json.node.role, 'all');
    const checks = byName(json.json.checks);
    assert.ok(
      ['ehlo-name', 'reverse-dns', 'resolver', 'dnssec', 'port-25', 'spf', 'dmarc', 'mta-sts', 'tls-rpt'].every(
        (name) => name in checks,
      ),
      Object.keys(checks).join(', '),
    );
    assert.is(checks.relay.ok, true);
    assert.match(checks.relay.message, /DELIVERY=direct: this node delivers to the recipients' MX hosts itself/);
    assert.not.match(checks.relay.message, /captured/);
    // The default EHLO name on an address PUBLIC_URL: the literal (or this host's FQDN, which the test DNS does not know).
    assert.is(checks['ehlo-name'].ok, false);
    assert.match(checks['ehlo-name'].message, /not a fully qualified domain name|does not resolve/);
    assert.match(checks['ehlo-name'].fix!, /Set EHLO_NAME to a name such as mail\.example\.com/);
    // The port-25 probe left from 127.0.0.1: that is the outbound address, and it has no PTR.
    assert.is(checks['reverse-dns'].ok, false);
    assert.match(checks['reverse-dns'].message, /127\.0\.0\.1: no PTR record|127\.0\.0\.1 has no PTR record/);
    assert.match(checks['reverse-dns'].fix!, /set (its|the) PTR to/);
    assert.not.match(checks['reverse-dns'].fix!, /PTR to \[/, 'never asks for a PTR naming an address literal');
    assert.is(checks.resolver.ok, true);
    assert.match(checks.resolver.message, new RegExp(`MX of probe\\.test is mx\\.probe\\.test \\(${mx.address}\\)`));
    // The test DNS server does not validate: a warning with what to change.
    assert.is(checks.dnssec.ok, true);
    assert.match(checks.dnssec.message, /^Warning: .* does not validate DNSSEC/);
    assert.match(checks.dnssec.fix!, /unbound/);
    assert.is(checks['port-25'].ok, true);
    assert.match(
      checks['port-25'].message,
      new RegExp(`Port 25 to mx\\.probe\\.test \\(${mx.address}\\) opens from 127\\.0\\.0\\.1: 220`),
    );
    assert.is(checks.dmarc.ok, false);
    assert.match(
      checks.dmarc.message,
      /the platform has no domain of its own \(PUBLIC_URL http:\/\/127\.0\.0\.1:3000 names no domain\)/,
    );
    // With a verified sending domain and no SPF record for it.
    const spf = byName(again.json.checks).spf;
    assert.is(spf.ok, false);
    assert.match(spf.message, /acme\.test has no SPF record \(publish v=spf1 ip4:127\.0\.0\.1 ~all\)/);

    assert.is(human.code, 1);
    assert.match(human.stdout, /^node \S+ \(ROLE=all, DELIVERY=direct\)/);
    assert.match(human.stdout, /✓ relay\s+DELIVERY=direct/);
    assert.match(human.stdout, /✗ ehlo-name\s+The EHLO name/);
    assert.match(human.stdout, /✗ reverse-dns\s+No forward-confirmed reverse DNS/);
    assert.match(human.stdout, /! dnssec\s+Warning:/);
    assert.match(human.stdout, /fix: Set EHLO_NAME/);
    assert.not.match(human.stdout, /mail is captured/);
  } finally {
    await ctx.close();
  }
});

test('a host configured right: EHLO name with FCrDNS, port 25, SPF, DMARC, MTA-STS and TLS-RPT all pass', async () => {
  const zone = dns.zone;
  zone.a.set('mta.acme.test', ['127.0.0.1']);
  zone.ptr.set('1.0.0.127.in-addr.arpa', ['mta.acme.test']);
  zone.txt.set('acme.test', ['v=spf1 ip4:127.0.0.1 -all']);
  zone.txt.set('mail.acme.test', ['v=spf1 include:_spf.acme.test -all']);
  zone.txt.set('_spf.acme.test', ['v=spf1 ip4:127.0.0.0/24 -all']);
  zone.txt.set('_dmarc.mail.acme.test', ['v=DMARC1; p=reject; rua=mailto:dmarc-reports@mail.acme.test']);
  zone.txt.set('_mta-sts.mail.acme.test', ['v=STSv1; id=20261128']);
  zone.txt.set('_smtp._tls.mail.acme.test', ['v=TLSRPTv1; rua=mailto:tls-reports@mail.acme.test']);
  const ctx = await createTestContext({
    env: DIRECT_ENV({
      DNS_SERVERS: dns.address,
      PUBLIC_URL: 'https://mail.acme.test',
      EHLO_NAME: 'mta.acme.test',
      OUTBOUND_ADDRESS: '127.0.0.1',
    }),
  });
  try {
    const admin = await createAdmin(ctx.app, { platformAdmin: true });
    await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, await createTenant(admin.id, 'Acme'), 'acme.test');
    const { json, human } = await doctor(ctx);
    const checks = byName(json.json.checks);
    for (const name of [
      'relay',
      'ehlo-name',
      'reverse-dns',
      'resolver',
      'port-25',
      'spf',
      'dmarc',
      'mta-sts',
      'tls-rpt',
    ])
      assert.is(checks[name].ok, true, `${name}: ${checks[name].message}`);
    assert.match(
      checks['ehlo-name'].message,
      /The EHLO name mta\.acme\.test is fully qualified and resolves to 127\.0\.0\.1/,
    );
    assert.match(checks['reverse-dns'].message, /127\.0\.0\.1 ⇄ mta\.acme\.test/);
    // Loopback passes FCrDNS here, and is still called what it is.
    assert.match(checks['reverse-dns'].message, /Warning: 127\.0\.0\.1 is loopback/);
    assert.match(checks.spf.message, /SPF of mail\.acme\.test, acme\.test authorises 127\.0\.0\.1/);
    assert.match(checks['tls-rpt'].message, /_smtp\._tls\.mail\.acme\.test: v=TLSRPTv1/);
    assert.match(human.stdout, /✓ ehlo-name\s+The EHLO name mta\.acme\.test/);
    assert.match(human.stdout, /✓ port-25\s+Port 25 to mx\.probe\.test/);
  } finally {
    await ctx.close();
  }
});

test('port 25 blocked, a resolver that sees no real DNS, a node that does not deliver: each says what to do', async () => {
  const blocked = await freeLoopbackAddress();
  dns.zone.mx.set('blocked.test', [{ exchange: 'mx.blocked.test', priority: 10 }]);
  dns.zone.a.set('mx.blocked.test', [blocked]);
  const ctx = await createTestContext({ env: DIRECT_ENV({ DNS_SERVERS: dns.address, ROLE: 'api' }) });
  try {
    const run = (extra: Partial<TestContext['config']>) =>
      directDeliveryChecks({ config: { ...ctx.config, ...extra }, sequelize: ctx.db.sequelize }).then(byName);
    const closed = await run({ doctorProbeDomain: 'blocked.test' });
    assert.is(closed['port-25'].ok, false);
    assert.match(
      closed['port-25'].message,
      new RegExp(
        `Outbound port 25 to mx\\.blocked\\.test \\(${blocked.replaceAll('.', '\\.')}\\) did not open: ECONNREFUSED\\. Most hosting providers block port 25`,
      ),
    );
    assert.match(closed['port-25'].fix!, /Ask the hosting provider to unblock outbound TCP port 25/);
    assert.match(closed['reverse-dns'].message, /Not checked: the outbound address is not known/);
    assert.is(closed.node.ok, true);
    assert.match(closed.node.message, /ROLE=api\) does not deliver mail/);
    assert.match(closed.node.fix!, /svc doctor --local on each worker node/);

    const nowhere = await run({ doctorProbeDomain: 'nowhere.test' });
    assert.is(nowhere.resolver.ok, false);
    assert.match(nowhere.resolver.message, /answers NXDOMAIN for nowhere\.test, a domain that receives mail/);
    assert.match(nowhere.resolver.fix!, /unbound/);
    assert.match(nowhere['port-25'].message, /Not checked: no MX host of nowhere\.test/);
  } finally {
    await ctx.close();
  }
});

test('DNSSEC: a validating resolver passes (AD), a bogus signature is a failure', async () => {
  const resolver = await startValidatingResolver([
    { name: 'signed.test', kind: 'signed', records: ['@ IN A 127.0.0.9'] },
    { name: 'bogus.test', kind: 'bogus', records: ['@ IN A 127.0.0.9'] },
  ]);
  try {
    const client = createDnsClient({ servers: [resolver.address] });
    const config = { dnsServers: [resolver.address] };
    const signed = await checkDnssec(client, { ...config, doctorDnssecProbe: 'signed.test' });
    assert.equal(signed.ok, true);
    assert.match(signed.message, /validates DNSSEC \(AD on signed\.test\): DANE is applied/);
    assert.is(signed.fix, undefined);
    const bogus = await checkDnssec(client, { ...config, doctorDnssecProbe: 'bogus.test' });
    assert.is(bogus.ok, false);
    assert.match(bogus.message, /SERVFAIL for bogus\.test/);
  } finally {
    await resolver.close();
  }
});

test.run();
