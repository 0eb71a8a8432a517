// Sending domains over HTTP: registration, validation, isolation, verification against a real DNS
// server, deletion, the send-pipeline hooks and the daily re-check.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createPublicKey } from 'node:crypto';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addMember, createAdmin, createApiKey, createWorld } from './helpers/fixtures.ts';
import { startDnsServer, publishRecords, type TestDnsServer } from './helpers/dns-server.ts';
import { Domain } from '../daemon/modules/domains/model.ts';
import { unseal } from '../daemon/crypto/sealed.ts';
import { isVerifiedSenderDomain } from '../daemon/modules/domains/service.ts';
import { returnPathFor } from '../daemon/mail/addresses.ts';
import { reverifyDueDomains } from '../daemon/modules/domains/maintenance.ts';

let ctx: TestContext;
let dns: TestDnsServer;
let world: Awaited<ReturnType<typeof createWorld>>;
let other: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  dns = await startDnsServer();
  ctx = await createTestContext({ env: { DNS_SERVERS: dns.address, PUBLIC_URL: 'https://mail.svc.test' } });
  await ctx.db.sequelize.query(
    `INSERT INTO platform_settings (key, value) VALUES ('returnPathDomain', '"rp.svc.test"')`,
  );
  dns.zone.txt.set('_spf.mail.svc.test', ['v=spf1 ip4:192.0.2.10 -all']);
  world = await createWorld(ctx.app);
  other = await createWorld(ctx.app);
});
test.after(async () => {
  await ctx?.close();
  await dns?.close();
});

async function addDomain(headers: Record<string, string>, name: string) {
  const res = await ctx.app.inject({ method: 'POST', url: '/domains', headers, payload: { name } });
  assert.is(res.statusCode, 201, res.body);
  return res.json();
}

test('POST /domains answers the four records and keeps the private key sealed', async () => {
  const body = await addDomain(world.asOwner, 'created.test');
  assert.is(body.name, 'created.test');
  assert.is(body.status, 'pending');
  assert.match(body.dkimSelector, /^svc\d{6}[0-9a-f]{4}$/);
  const byKind = Object.fromEntries(body.records.map((r: { record: string }) => [r.record, r]));
  assert.equal(Object.keys(byKind).sort(), ['dkim', 'dmarc', 'returnPath', 'spf']);
  assert.equal(
    { ...byKind.spf, status: undefined },
    {
      record: 'spf',
      type: 'TXT',
      name: 'created.test',
      value: 'v=spf1 include:_spf.mail.svc.test ~all',
      required: true,
      status: undefined,
      found: [],
      checkedAt: null,
    },
  );
  assert.is(byKind.dkim.name, `${body.dkimSelector}._domainkey.created.test`);
  assert.match(byKind.dkim.value, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]+$/);
  assert.is(byKind.dmarc.name, '_dmarc.created.test');
  assert.match(byKind.dmarc.value, /^v=DMARC1; p=quarantine; rua=mailto:/);
  assert.equal(
    [byKind.returnPath.type, byKind.returnPath.name, byKind.returnPath.value],
    ['CNAME', 'bounces.created.test', 'rp.svc.test'],
  );
  assert.ok(body.records.every((r: { status: string }) => r.status === 'pending'));

  const publicKey = createPublicKey({
    key: Buffer.from(byKind.dkim.value.split('p=')[1], 'base64'),
    format: 'der',
    type: 'spki',
  });
  assert.is(publicKey.asymmetricKeyDetails?.modulusLength, 2048);
  const row = await Domain.findByPk(body.id);
  assert.ok(row);
  assert.is(row.tenantId, world.tenantId);
  assert.not.match(row.dkimPrivateKeySealed, /PRIVATE KEY/);
  const pem = unseal(ctx.deps.secrets.encryptionKey, row.dkimPrivateKeySealed);
  assert.match(pem, /BEGIN PRIVATE KEY/);
  assert.is(createPublicKey(pem).export({ type: 'spki', format: 'der' }).toString('base64'), row.dkimPublicKey);
});

test('IDN names are stored as punycode', async () => {
  const body = await addDomain(world.asOwner, 'Bücher.Example.');
  assert.is(body.name, 'xn--bcher-kva.example');
  assert.is(body.unicodeName, 'bücher.example');
});

test('bad names are 400 with the field named', async () => {
  for (const name of [
    '192.0.2.1',
    '[::1]',
    'localhost',
    'user@example.com',
    'exa mple.com',
    '-bad.example',
    'example.123',
    'a..b.com',
  ]) {
    const res = await ctx.app.inject({ method: 'POST', url: '/domains', headers: world.asOwner, payload: { name } });
    assert.is(res.statusCode, 400, `${name}: ${res.body}`);
    assert.is(res.json().code, 'VALIDATION_FAILED');
    assert.is(res.json().details[0].field, 'name', name);
  }
  for (const payload of [{}, { name: '' }, { name: 'ok.test', extra: 1 }]) {
    const res = await ctx.app.inject({ method: 'POST', url: '/domains', headers: world.asOwner, payload });
    assert.is(res.statusCode, 400, JSON.stringify(payload));
  }
  assert.is(await Domain.count({ where: { tenantId: world.tenantId, name: 'localhost' } }), 0);
});

test('a duplicate in the tenant is 409; another tenant may register the same name', async () => {
  await addDomain(world.asOwner, 'dup.test');
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/domains',
    headers: world.asOwner,
    payload: { name: 'DUP.test.' },
  });
  assert.is(res.statusCode, 409);
  assert.is(res.json().code, 'DOMAIN_EXISTS');
  await addDomain(other.asOwner, 'dup.test');
  assert.is(await Domain.count({ where: { name: 'dup.test' } }), 2);
});

test('API keys are refused (403) except the listing with domains:read (an extension), viewers may read but not change, other tenants see 404', async () => {
  const mine = await addDomain(world.asOwner, 'isolated.test');
  const listing = await ctx.app.inject({ method: 'GET', url: '/domains', headers: world.asKey });
  assert.is(listing.statusCode, 200, 'a key with domains:read lists the domains');
  assert.ok(listing.json().data.some((domain: { name: string }) => domain.name === 'isolated.test'));
  const narrow = await createApiKey(world.tenantId, { scopes: ['email:send'] });
  const refused = await ctx.app.inject({
    method: 'GET',
    url: '/domains',
    headers: { authorization: `Bearer ${narrow.key}` },
  });
  assert.is(refused.statusCode, 403);
  assert.is(refused.json().code, 'INSUFFICIENT_SCOPE');
  for (const [method, url] of [
    ['POST', '/domains'],
    ['GET', `/domains/${mine.id}/dns`],
    ['POST', `/domains/${mine.id}/verify`],
    ['GET', `/domains/${mine.id}/diagnose`],
    ['DELETE', `/domains/${mine.id}`],
  ] as const) {
    const res = await ctx.app.inject({
      method,
      url,
      headers: world.asKey,
      ...(method === 'POST' && url === '/domains' ? { payload: { name: 'k.test' } } : {}),
    });
    assert.is(res.statusCode, 403, `${method} ${url}`);
    const foreign = await ctx.app.inject({ method, url, headers: other.asOwner });
    if (url !== '/domains') assert.is(foreign.statusCode, 404, `${method} ${url} from another tenant`);
  }
  const viewer = await createAdmin(ctx.app);
  await addMember(world.tenantId, viewer.id, 'viewer');
  const asViewer = { authorization: `Bearer ${viewer.token}`, 'x-tenant-id': world.tenantId };
  assert.is((await ctx.app.inject({ method: 'GET', url: '/domains', headers: asViewer })).statusCode, 200);
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: '/domains', headers: asViewer, payload: { name: 'viewer.test' } }))
      .statusCode,
    403,
  );
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: `/domains/${mine.id}`, headers: asViewer })).statusCode,
    403,
  );
  const list = (await ctx.app.inject({ method: 'GET', url: '/domains?limit=100', headers: other.asOwner })).json();
  assert.ok(list.data.every((d: { name: string }) => d.name !== 'isolated.test'));
  assert.ok(await Domain.findByPk(mine.id));
});

test('GET /domains pages', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/domains?page=1&limit=2', headers: world.asOwner });
  assert.is(res.statusCode, 200);
  const body = res.json();
  const total = await Domain.count({ where: { tenantId: world.tenantId } });
  assert.equal(body.meta, { page: 1, limit: 2, total, totalPages: Math.ceil(total / 2) });
  assert.is(body.data.length, 2);
  assert.is((await ctx.app.inject({ method: 'GET', url: '/domains?limit=0', headers: world.asOwner })).statusCode, 400);
});

test('verify: published records (DKIM split in several strings) make the domain verified, per record', async () => {
  const domain = await addDomain(world.asOwner, 'good.test');
  publishRecords(dns.zone, domain.records);
  const dkimName = `${domain.dkimSelector}._domainkey.good.test`;
  assert.ok(Array.isArray(dns.zone.txt.get(dkimName)![0]), 'the key is served as several strings');
  const res = await ctx.app.inject({ method: 'POST', url: `/domains/${domain.id}/verify`, headers: world.asOwner });
  assert.is(res.statusCode, 200, res.body);
  const body = res.json();
  assert.is(body.status, 'verified');
  assert.ok(body.verifiedAt);
  assert.ok(
    body.records.every((r: { status: string }) => r.status === 'verified'),
    JSON.stringify(body.records.map((r: { status: string }) => r.status)),
  );
  const dkim = body.records.find((r: { record: string }) => r.record === 'dkim');
  assert.equal(dkim.found, [dkim.value]);

  const row = await Domain.findByPk(domain.id);
  assert.is(row!.status, 'verified');
  assert.ok(row!.verifiedAt);
  assert.equal(Object.keys(row!.recordChecks).sort(), ['dkim', 'dmarc', 'returnPath', 'spf']);
  assert.is(row!.recordChecks.dkim!.status, 'verified');

  const dnsView = (
    await ctx.app.inject({ method: 'GET', url: `/domains/${domain.id}/dns`, headers: world.asOwner })
  ).json();
  assert.equal(
    dnsView.records.map((r: { status: string }) => r.status),
    ['verified', 'verified', 'verified', 'verified'],
  );
  assert.ok(dnsView.records.every((r: { checkedAt: string | null }) => r.checkedAt !== null));

  const sequelize = ctx.db.sequelize;
  assert.is(await isVerifiedSenderDomain(ctx.workerResources, world.tenantId, 'hello@good.test'), true);
  assert.is(await isVerifiedSenderDomain(ctx.workerResources, world.tenantId, 'news.good.test'), true);
  assert.is(await isVerifiedSenderDomain(ctx.workerResources, world.tenantId, 'notgood.test'), false);
  assert.is(await isVerifiedSenderDomain(ctx.workerResources, other.tenantId, 'good.test'), false);
  assert.is(
    await returnPathFor({ sequelize, ...ctx.workerResources }, world.tenantId, 'good.test'),
    'bounces.good.test',
  );
  assert.is(await returnPathFor({ sequelize, ...ctx.workerResources }, other.tenantId, 'good.test'), null);
  await sequelize.query(`DELETE FROM platform_settings WHERE key = 'returnPathDomain'`);
  assert.is(
    await returnPathFor({ sequelize, ...ctx.workerResources }, world.tenantId, 'good.test'),
    null,
    'no return path once the platform stops routing bounces',
  );
  await sequelize.query(`INSERT INTO platform_settings (key, value) VALUES ('returnPathDomain', '"rp.svc.test"')`);
  const dkimOptions = await ctx.workerResources.dkimSigning.dkimFor(world.tenantId, 'good.test');
  assert.equal([dkimOptions?.domainName, dkimOptions?.keySelector], ['good.test', domain.dkimSelector]);
});

test('verify: missing records fail the domain and say which', async () => {
  const domain = await addDomain(world.asOwner, 'bare.test');
  dns.zone.exists.add('bare.test');
  const body = (
    await ctx.app.inject({ method: 'POST', url: `/domains/${domain.id}/verify`, headers: world.asOwner })
  ).json();
  assert.is(body.status, 'failed');
  assert.is(body.verifiedAt, null);
  assert.equal(
    body.records.map((r: { status: string }) => r.status),
    ['missing', 'missing', 'missing', 'missing'],
  );
  assert.ok(body.problems.some((p: { code: string }) => p.code === 'SPF_MISSING'));
  assert.is((await Domain.findByPk(domain.id))!.status, 'failed');
  assert.is(await isVerifiedSenderDomain(ctx.workerResources, world.tenantId, 'bare.test'), false);
  assert.is(await ctx.workerResources.dkimSigning.dkimFor(world.tenantId, 'bare.test'), null);
});

test('verify: a resolver time-out does not un-verify a verified domain', async () => {
  const domain = await addDomain(world.asOwner, 'flaky.test');
  publishRecords(dns.zone, domain.records);
  assert.is(
    (await ctx.app.inject({ method: 'POST', url: `/domains/${domain.id}/verify`, headers: world.asOwner })).json()
      .status,
    'verified',
  );
  dns.zone.silent.add(`${domain.dkimSelector}._domainkey.flaky.test`);
  const started = Date.now();
  const body = (
    await ctx.app.inject({ method: 'POST', url: `/domains/${domain.id}/verify`, headers: world.asOwner })
  ).json();
  assert.ok(Date.now() - started < 8000);
  assert.is(body.status, 'verified');
  assert.is(body.records.find((r: { record: string }) => r.record === 'dkim').status, 'error');
  assert.ok(
    body.problems.some((p: { code: string; record: string }) => p.code === 'DNS_TIMEOUT' && p.record === 'dkim'),
  );
});

test('DELETE removes the domain and its key', async () => {
  const domain = await addDomain(world.asOwner, 'gone.test');
  const res = await ctx.app.inject({ method: 'DELETE', url: `/domains/${domain.id}`, headers: world.asOwner });
  assert.is(res.statusCode, 200);
  assert.equal(res.json(), { ok: true });
  assert.is(await Domain.findByPk(domain.id), null);
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: `/domains/${domain.id}/dns`, headers: world.asOwner })).statusCode,
    404,
  );
  assert.is(
    (await ctx.app.inject({ method: 'DELETE', url: `/domains/${domain.id}`, headers: world.asOwner })).statusCode,
    404,
  );
  assert.is(
    (await ctx.app.inject({ method: 'GET', url: '/domains/not-a-uuid/dns', headers: world.asOwner })).statusCode,
    400,
  );
});

test('daily re-check records drift when a published record changes', async () => {
  const domain = await addDomain(world.asOwner, 'drift.test');
  publishRecords(dns.zone, domain.records);
  await ctx.app.inject({ method: 'POST', url: `/domains/${domain.id}/verify`, headers: world.asOwner });
  const deps = {
    db: ctx.db,
    secrets: ctx.deps.secrets,
    config: ctx.config,
    dkimSigning: ctx.workerResources.dkimSigning,
  };
  const warnings: unknown[] = [];
  const log = { warn: (...args: unknown[]) => void warnings.push(args) };

  // Checked just now: not due.
  await Domain.update({ lastCheckedAt: new Date() }, { where: { status: 'verified' } });
  assert.equal(await reverifyDueDomains(deps, log as never), { checked: 0, drifted: 0 });

  const dkimName = `${domain.dkimSelector}._domainkey.drift.test`;
  dns.zone.txt.set(dkimName, ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrongkey']);
  await Domain.update({ lastCheckedAt: new Date(Date.now() - 25 * 60 * 60_000) }, { where: { id: domain.id } });
  const result = await reverifyDueDomains(deps, log as never);
  assert.equal(result, { checked: 1, drifted: 1 });
  const row = await Domain.findByPk(domain.id);
  assert.is(row!.status, 'failed');
  assert.ok(row!.driftDetectedAt);
  assert.equal(row!.drift, [{ record: 'dkim', from: 'verified', to: 'mismatch' }]);
  assert.is(warnings.length, 1);
  const view = (
    await ctx.app.inject({ method: 'GET', url: `/domains/${domain.id}/dns`, headers: world.asOwner })
  ).json();
  assert.equal(view.drift, [{ record: 'dkim', from: 'verified', to: 'mismatch' }]);
  assert.is(await isVerifiedSenderDomain(ctx.workerResources, world.tenantId, 'drift.test'), false);
});

test('the domain routes are in /openapi.json with their schemas', async () => {
  const spec = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  assert.ok(spec.paths['/domains'].post.responses['201']);
  assert.ok(spec.paths['/domains/{id}/diagnose'].get.responses['200']);
  assert.ok(spec.paths['/domains/{id}/verify'].post.responses['200']);
  assert.equal(spec.paths['/domains/{id}'].delete.tags, ['domains']);
});

test.run();
