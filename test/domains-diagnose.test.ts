// GET /domains/{id}/diagnose against a real DNS server: every diagnosis code for its case, the
// records to publish, time-outs reported (not thrown) in bounded time, and nothing written.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { splitTxt, startDnsServer, startSilentDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { Domain } from '../daemon/modules/domains/model.ts';
import { generateDkimKey, newDkimSelector, type DkimKeyMaterial } from '../daemon/modules/domains/keys.ts';
import { diagnoseDomain } from '../daemon/modules/domains/service.ts';
import { inspectDomain } from '../daemon/modules/domains/inspect.ts';
import { createDnsLookup } from '../daemon/modules/domains/dns-lookup.ts';
import { DIAGNOSIS_CODES, type DiagnosisBody, type DiagnosisCode } from '../shared/schemas/domains.ts';

const OURS = 'include:_spf.mail.svc.test';
let ctx: TestContext;
let dns: TestDnsServer;
let world: Awaited<ReturnType<typeof createWorld>>;
let key: DkimKeyMaterial;
let otherKey: DkimKeyMaterial;
const seen = new Set<DiagnosisCode>();

test.before(async () => {
  dns = await startDnsServer();
  ctx = await createTestContext({ env: { DNS_SERVERS: dns.address, PUBLIC_URL: 'https://mail.svc.test' } });
  await ctx.db.sequelize.query(
    `INSERT INTO platform_settings (key, value) VALUES ('returnPathDomain', '"rp.svc.test"')`,
  );
  world = await createWorld(ctx.app);
  [key, otherKey] = await Promise.all([
    generateDkimKey(ctx.deps.secrets.encryptionKey),
    generateDkimKey(ctx.deps.secrets.encryptionKey),
  ]);
  dns.zone.txt.set('_spf.mail.svc.test', ['v=spf1 ip4:192.0.2.10 -all']);
  dns.zone.txt.set('_spf.other-esp.test', ['v=spf1 ip4:198.51.100.0/24 -all']);
  dns.zone.exists.add('nospf.test');
  // 13 look-ups: ours (1) + a.lk (1 + a, mx, ptr, exists, include:c.lk = 5, c.lk's a = 1) + b.lk (1 + 4)
  dns.zone.txt.set('a.lk.test', ['v=spf1 a mx ptr exists:%{i}.x.test include:c.lk.test -all']);
  dns.zone.txt.set('b.lk.test', ['v=spf1 a mx mx:m.test a:b.test -all']);
  dns.zone.txt.set('c.lk.test', ['v=spf1 a -all']);
});
test.after(async () => {
  await ctx?.close();
  await dns?.close();
});

/** A domain row of the tenant (one shared test key, so no RSA key is generated per case). */
async function domainRow(name: string) {
  return Domain.create({
    tenantId: world.tenantId,
    name,
    dkimSelector: newDkimSelector(),
    dkimPublicKey: key.publicKey,
    dkimPrivateKeySealed: key.privateKeySealed,
  });
}

interface Published {
  spf?: string[];
  dkim?: (string | string[])[];
  dmarc?: string[];
  returnPath?: string;
}

/** Publishes exactly the given records for the domain (the good ones by default). */
async function setUp(name: string, published: Published = {}) {
  const domain = await domainRow(name);
  const good = (
    await ctx.app.inject({ method: 'GET', url: `/domains/${domain.id}/dns`, headers: world.asOwner })
  ).json().records;
  const value = (kind: string) => good.find((r: { record: string }) => r.record === kind).value as string;
  dns.zone.txt.set(name, published.spf ?? [value('spf')]);
  dns.zone.txt.set(
    `${domain.dkimSelector}._domainkey.${name}`,
    published.dkim ?? [[value('dkim').slice(0, 200), value('dkim').slice(200)]],
  );
  dns.zone.txt.set(`_dmarc.${name}`, published.dmarc ?? [value('dmarc')]);
  dns.zone.cname.set(`bounces.${name}`, published.returnPath ?? 'rp.svc.test');
  return domain;
}

async function diagnose(id: string): Promise<DiagnosisBody> {
  const res = await ctx.app.inject({ method: 'GET', url: `/domains/${id}/diagnose`, headers: world.asOwner });
  assert.is(res.statusCode, 200, res.body);
  const body = res.json() as DiagnosisBody;
  for (const problem of body.problems) seen.add(problem.code);
  return body;
}

const codes = (body: DiagnosisBody) => body.problems.map((p) => p.code);
function find(body: DiagnosisBody, code: DiagnosisCode) {
  const problem = body.problems.find((p) => p.code === code);
  assert.ok(problem, `expected ${code} in ${JSON.stringify(codes(body))}`);
  assert.ok(problem.message.length > 0 && problem.fix.length > 0);
  return problem;
}

test('a well-published domain (DKIM in two strings) has no problems and nothing to publish', async () => {
  const domain = await setUp('good.test');
  const before = (await Domain.findByPk(domain.id))!.toJSON();
  const body = await diagnose(domain.id);
  assert.equal(body.problems, []);
  assert.is(body.ok, true);
  assert.equal(body.publish, []);
  assert.is(body.domain, 'good.test');
  assert.equal((await Domain.findByPk(domain.id))!.toJSON(), before, 'diagnose writes nothing');
});

test('NXDOMAIN: one problem, every record to publish', async () => {
  const domain = await domainRow('nx.test');
  const body = await diagnose(domain.id);
  assert.equal(codes(body), ['DOMAIN_NXDOMAIN']);
  assert.is(find(body, 'DOMAIN_NXDOMAIN').record, 'domain');
  assert.is(body.ok, false);
  assert.equal(
    body.publish.map((r) => r.record),
    ['spf', 'dkim', 'dmarc', 'returnPath'],
  );
});

test('missing records', async () => {
  const domain = await domainRow('empty.test');
  dns.zone.exists.add('empty.test');
  const body = await diagnose(domain.id);
  assert.equal(codes(body), ['SPF_MISSING', 'DKIM_MISSING', 'DMARC_MISSING', 'RETURN_PATH_MISSING']);
  assert.equal(
    body.problems.map((p) => p.severity),
    ['error', 'error', 'warning', 'warning'],
  );
  assert.equal(
    body.publish.map((r) => r.record),
    ['spf', 'dkim', 'dmarc', 'returnPath'],
  );
  assert.equal(body.publish[3], {
    record: 'returnPath',
    type: 'CNAME',
    name: 'bounces.empty.test',
    value: 'rp.svc.test',
  });
});

test('SPF that does not include us: the merged record to publish keeps the other sender', async () => {
  const domain = await setUp('spf-other.test', {
    spf: ['v=spf1 include:_spf.other-esp.test -all', 'google-site-verification=abc'],
  });
  const body = await diagnose(domain.id);
  assert.equal(codes(body), ['SPF_NOT_INCLUDING_US']);
  assert.equal(body.publish, [
    { record: 'spf', type: 'TXT', name: 'spf-other.test', value: `v=spf1 include:_spf.other-esp.test ${OURS} -all` },
  ]);
});

test('more than one SPF record', async () => {
  const domain = await setUp('spf-two.test', {
    spf: [`v=spf1 ${OURS} ~all`, 'v=spf1 include:_spf.other-esp.test ~all'],
  });
  const body = await diagnose(domain.id);
  assert.is(find(body, 'SPF_MULTIPLE').severity, 'error');
  assert.is(body.publish[0].value, `v=spf1 ${OURS} include:_spf.other-esp.test ~all`);
});

test('more than 10 DNS look-ups, counted through nested includes', async () => {
  const domain = await setUp('spf-many.test', { spf: [`v=spf1 ${OURS} include:a.lk.test include:b.lk.test ~all`] });
  const body = await diagnose(domain.id);
  assert.equal(codes(body), ['SPF_TOO_MANY_LOOKUPS']);
  assert.match(find(body, 'SPF_TOO_MANY_LOOKUPS').message, /takes 13 DNS look-ups/);
});

test('include: of a domain without SPF', async () => {
  const domain = await setUp('spf-broken.test', { spf: [`v=spf1 ${OURS} include:nospf.test ~all`] });
  assert.match(find(await diagnose(domain.id), 'SPF_INCLUDE_BROKEN').message, /nospf\.test/);
});

test('+all is an error, ?all a warning', async () => {
  const plus = await diagnose((await setUp('spf-plus.test', { spf: [`v=spf1 ${OURS} +all`] })).id);
  assert.equal(codes(plus), ['SPF_PLUS_ALL']);
  assert.is(plus.ok, false);
  assert.is(plus.publish[0].value, `v=spf1 ${OURS} ~all`);
  const neutral = await diagnose((await setUp('spf-neutral.test', { spf: [`v=spf1 ${OURS} ?all`] })).id);
  assert.equal(codes(neutral), ['SPF_NEUTRAL_ALL']);
  assert.is(find(neutral, 'SPF_NEUTRAL_ALL').severity, 'warning');
  assert.is(neutral.ok, true);
});

test('DKIM: another key, and a record without a key', async () => {
  const mismatch = await diagnose(
    (await setUp('dkim-other.test', { dkim: [splitTxt(`v=DKIM1; k=rsa; p=${otherKey.publicKey}`)] })).id,
  );
  assert.equal(codes(mismatch), ['DKIM_KEY_MISMATCH']);
  assert.match(mismatch.publish[0].value, new RegExp(`p=${key.publicKey.slice(0, 40).replace(/[+/]/g, '\\$&')}`));
  const empty = await diagnose((await setUp('dkim-empty.test', { dkim: ['v=DKIM1; k=rsa; p='] })).id);
  assert.equal(codes(empty), ['DKIM_INVALID']);
});

test('DMARC: p=none (warning), no rua (info), several records, no policy', async () => {
  const none = await diagnose((await setUp('dmarc-none.test', { dmarc: ['v=DMARC1; p=none'] })).id);
  assert.equal(codes(none), ['DMARC_POLICY_NONE', 'DMARC_NO_RUA']);
  assert.equal(
    none.problems.map((p) => p.severity),
    ['warning', 'info'],
  );
  assert.is(none.ok, true);
  assert.equal(none.publish, [
    { record: 'dmarc', type: 'TXT', name: '_dmarc.dmarc-none.test', value: 'v=DMARC1; p=quarantine' },
  ]);
  const two = await diagnose(
    (await setUp('dmarc-two.test', { dmarc: ['v=DMARC1; p=reject; rua=mailto:a@x.test', 'v=DMARC1; p=none'] })).id,
  );
  assert.equal(codes(two), ['DMARC_MULTIPLE']);
  const invalid = await diagnose(
    (await setUp('dmarc-bad.test', { dmarc: ['v=DMARC1; p=maybe; rua=mailto:a@x.test'] })).id,
  );
  assert.equal(codes(invalid), ['DMARC_INVALID']);
  const missing = await diagnose((await setUp('dmarc-missing.test', { dmarc: ['some other text'] })).id);
  assert.equal(codes(missing), ['DMARC_MISSING']);
});

test("a subdomain inherits its parent's DMARC record", async () => {
  const domain = await setUp('news.good.test');
  dns.zone.txt.delete('_dmarc.news.good.test');
  assert.equal(codes(await diagnose(domain.id)), []);
});

test('return path pointing elsewhere', async () => {
  const body = await diagnose((await setUp('rp-wrong.test', { returnPath: 'bounces.elsewhere.test' })).id);
  assert.equal(codes(body), ['RETURN_PATH_MISMATCH']);
  assert.match(find(body, 'RETURN_PATH_MISMATCH').message, /bounces\.elsewhere\.test/);
});

test('a record whose server never answers is a DNS_TIMEOUT problem, in bounded time', async () => {
  const domain = await setUp('slow.test');
  dns.zone.silent.add(`${domain.dkimSelector}._domainkey.slow.test`);
  const started = Date.now();
  const body = await diagnose(domain.id);
  assert.ok(Date.now() - started < 8000, `took ${Date.now() - started} ms`);
  assert.equal(codes(body), ['DNS_TIMEOUT']);
  assert.is(find(body, 'DNS_TIMEOUT').record, 'dkim');
  assert.is(body.ok, false);
});

test('SERVFAIL is a DNS_ERROR problem', async () => {
  const domain = await setUp('servfail.test');
  dns.zone.servfail.add('_dmarc.servfail.test');
  const body = await diagnose(domain.id);
  assert.equal(codes(body), ['DNS_ERROR']);
  assert.equal([body.problems[0].record, body.problems[0].severity], ['dmarc', 'warning']);
});

test('a resolver that never answers: every record reported, nothing thrown', async () => {
  const silent = await startSilentDnsServer();
  try {
    const domain = await domainRow('unreachable.test');
    const started = Date.now();
    const body = await diagnoseDomain(
      {
        db: ctx.db,
        secrets: ctx.deps.secrets,
        config: { ...ctx.config, dnsServers: [silent.address] },
        dkimSigning: ctx.workerResources.dkimSigning,
      },
      {
        tenantId: world.tenantId,
        adminId: world.owner.id,
        apiKeyId: null,
        role: 'owner',
        isPlatformAdmin: false,
        testMode: false,
      },
      { id: domain.id },
    );
    assert.ok(Date.now() - started < 8000, `took ${Date.now() - started} ms`);
    assert.equal(
      body.problems.map((p) => `${p.record}:${p.code}`),
      ['spf:DNS_TIMEOUT', 'dkim:DNS_TIMEOUT', 'dmarc:DNS_TIMEOUT', 'returnPath:DNS_TIMEOUT'],
    );
    assert.is(body.ok, false);
  } finally {
    await silent.close();
  }
});

test("another tenant's domain is 404; an API key is 403", async () => {
  const domain = await domainRow('private.test');
  const stranger = await createWorld(ctx.app);
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: `/domains/${domain.id}/diagnose`, headers: stranger.asOwner }))
      .statusCode,
    404,
  );
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: `/domains/${domain.id}/diagnose`, headers: world.asKey })).statusCode,
    403,
  );
});

test('a return path published as MX (when the platform asks for MX) is checked by exchange', async () => {
  const domain = await setUp('rp-mx.test');
  const settings = {
    spfMechanism: OURS,
    returnPath: { type: 'MX' as const, target: 'feedback.svc.test', priority: 10 },
    dmarcRua: null,
  };
  dns.zone.exists.add('bounces.rp-mx.test');
  const lookup = () => createDnsLookup({ servers: [dns.address] });
  const missing = await inspectDomain(lookup(), domain, settings);
  assert.equal(
    missing.problems.map((p) => p.code),
    ['RETURN_PATH_MISSING'],
  );
  assert.equal(missing.publish, [
    { record: 'returnPath', type: 'MX', name: 'bounces.rp-mx.test', value: 'feedback.svc.test', priority: 10 },
  ]);
  dns.zone.mx.set('bounces.rp-mx.test', [{ exchange: 'feedback.svc.test', priority: 10 }]);
  const good = await inspectDomain(lookup(), domain, settings);
  assert.equal(good.problems, []);
  assert.equal(good.records.returnPath, { status: 'verified', found: ['feedback.svc.test'] });
});

test('a sending domain that is also an inbound domain has its MX explained: missing, elsewhere, split', async () => {
  const domain = await setUp('both.test');
  const added = await ctx.app.inject({
    method: 'POST',
    url: '/inbound/domains',
    headers: world.asOwner,
    payload: { name: 'both.test' },
  });
  assert.is(added.statusCode, 201, added.body);
  const inbound = (body: DiagnosisBody) => body.problems.filter((p) => p.record === 'inboundMx');

  const missing = find(await diagnose(domain.id), 'INBOUND_MX_MISSING');
  assert.is(missing.severity, 'error');
  assert.match(missing.fix, /publish "both\.test\. MX 10 mail\.svc\.test\."/);

  dns.zone.mx.set('both.test', [{ exchange: 'mx.other-esp.test', priority: 10 }]);
  const elsewhere = await diagnose(domain.id);
  assert.is(elsewhere.ok, false);
  assert.match(find(elsewhere, 'INBOUND_MX_ELSEWHERE').message, /names mx\.other-esp\.test, not mail\.svc\.test/);

  dns.zone.mx.set('both.test', [
    { exchange: 'mail.svc.test', priority: 10 },
    { exchange: 'mx.other-esp.test', priority: 20 },
  ]);
  const split = find(await diagnose(domain.id), 'INBOUND_MX_SPLIT');
  assert.is(split.severity, 'warning');
  assert.match(split.message, /also has MX 20 mx\.other-esp\.test: senders may deliver there instead/);

  dns.zone.mx.set('both.test', [{ exchange: 'mail.svc.test', priority: 10 }]);
  assert.equal(inbound(await diagnose(domain.id)), []);
  // A sending domain that receives nothing here has no MX question.
  const sendingOnly = await setUp('sending-only.test');
  assert.equal(inbound(await diagnose(sendingOnly.id)), []);
});

test('every documented code was produced by some case', () => {
  assert.equal(
    DIAGNOSIS_CODES.filter((code) => !seen.has(code)),
    [],
  );
});

test.run();
