// The providers' sender rules at send time (issue 29, docs/mta.md "Sender rules and deliverability"),
// against a real DNS server: with DELIVERY=direct a send from a verified domain (DKIM aligned: d= the
// domain or its parent) is refused with 403 SENDER_RULES_NOT_MET while no usable DMARC record covers
// the From domain, accepted once one is published (the diagnosis forgets the cached answer), and let
// through when the DMARC look-up times out (fail-open). The diagnosis reports each rule with its fix.
// With a relay (DELIVERY=relay, or a project's own relay) the rules are not enforced.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createWorld } from './helpers/fixtures.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { Domain } from '../daemon/modules/domains/model.ts';
import { judgeDmarcRecords, SenderRules } from '../daemon/modules/domains/sender-rules.ts';
import type { DiagnosisBody } from '../shared/schemas/domains.ts';
import { checkReferences } from '../daemon/modules/emails/service.ts';
import { normalizeSend } from '../daemon/modules/emails/validate.ts';

let dns: TestDnsServer;
let direct: TestContext;
let world: Awaited<ReturnType<typeof createWorld>>;

test.before(async () => {
  dns = await startDnsServer();
  const env = { DNS_SERVERS: dns.address, PUBLIC_URL: 'https://mail.svc.test' };
  direct = await createTestContext({ env: { ...env, DELIVERY: 'direct' } });
  world = await createWorld(direct.app);
  await addVerifiedDomain(direct.db.sequelize, direct.deps.secrets, world.tenantId, 'acme.test');
  // Every name below acme.test exists; the DMARC records are added per case.
  dns.zone.txt.set('acme.test', ['v=spf1 include:_spf.mail.svc.test ~all']);
});

test.after(async () => {
  await direct?.close();
  await dns?.close();
});

function send(ctx: TestContext, headers: Record<string, string>, from: string) {
  return ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers,
    payload: { from, to: ['someone@example.net'], subject: 'Hi', textBody: 'Hello' },
  });
}

test('DMARC records: one v=DMARC1 with p= none/quarantine/reject counts; several, or no policy, do not', () => {
  assert.equal(judgeDmarcRecords('_dmarc.a.test', ['v=DMARC1; p=none']), {
    kind: 'found',
    name: '_dmarc.a.test',
    record: 'v=DMARC1; p=none',
  });
  assert.is(judgeDmarcRecords('_dmarc.a.test', ['v=spf1 -all']), null);
  assert.is(judgeDmarcRecords('_dmarc.a.test', ['v=DMARC1; p=none', 'v=DMARC1; p=reject'])?.kind, 'unusable');
  assert.is(judgeDmarcRecords('_dmarc.a.test', ['v=DMARC1; rua=mailto:x@a.test'])?.kind, 'unusable');
});

test('DMARC answers are kept: a found record and a time-out are asked once; the time-out is reported, not refused', async () => {
  dns.zone.txt.set('_dmarc.kept.test', ['v=DMARC1; p=reject']);
  dns.zone.silent.add('_dmarc.quiet.test');
  const troubles: { domain: string; name: string; reason: string }[] = [];
  const rules = new SenderRules({
    dnsServers: [dns.address],
    timeoutMs: 200,
    onLookupTrouble: (d) => troubles.push(d),
  });
  const asked = (name: string) => dns.queries.filter((q) => q === `TXT ${name}`).length;
  assert.equal(await rules.dmarc('kept.test'), {
    kind: 'found',
    name: '_dmarc.kept.test',
    record: 'v=DMARC1; p=reject',
  });
  assert.is((await rules.dmarc('KEPT.test')).kind, 'found');
  assert.is(asked('_dmarc.kept.test'), 1);
  assert.equal(await rules.dmarc('quiet.test'), { kind: 'unknown', name: '_dmarc.quiet.test', reason: 'timed out' });
  assert.is((await rules.dmarc('quiet.test')).kind, 'unknown');
  assert.is(asked('_dmarc.quiet.test'), 1);
  // Reported once per look-up, not per send.
  assert.equal(troubles, [{ domain: 'quiet.test', name: '_dmarc.quiet.test', reason: 'timed out' }]);
  // Forgotten (a diagnosis looked again): asked anew.
  rules.forget('kept.test');
  await rules.dmarc('kept.test');
  assert.is(asked('_dmarc.kept.test'), 2);
});

test('direct: no DMARC record → 403 SENDER_RULES_NOT_MET with the record to publish; nothing written', async () => {
  const res = await send(direct, world.asKey, 'App <app@acme.test>');
  const body = assertErrorBody(res, 403, 'SENDER_RULES_NOT_MET');
  const domain = await Domain.findOne({ where: { tenantId: world.tenantId, name: 'acme.test' } });
  const fix = 'Publish a TXT record at _dmarc.acme.test: v=DMARC1; p=none; rua=mailto:dmarc-reports@acme.test';
  assert.equal(body, {
    statusCode: 403,
    error: 'Forbidden',
    code: 'SENDER_RULES_NOT_MET',
    message: `acme.test has no DMARC record (looked up _dmarc.acme.test and its parents); Gmail, Yahoo and Outlook.com refuse or junk mail without one, so direct delivery does not send it. ${fix} (GET /domains/${domain!.id}/diagnose shows every rule).`,
    details: [
      {
        field: 'from',
        message: `DMARC: acme.test has no DMARC record (looked up _dmarc.acme.test and its parents). ${fix}`,
      },
    ],
  });
  const [{ count }] = await direct.db.sequelize.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM email_logs WHERE tenant_id = :tenantId`,
    { replacements: { tenantId: world.tenantId }, type: QueryTypes.SELECT },
  );
  assert.is(count, 0);
});

test('the diagnosis reports each rule with its fix; a DMARC problem is an error while the rules are enforced', async () => {
  const domain = await Domain.findOne({ where: { tenantId: world.tenantId, name: 'acme.test' } });
  const res = await direct.app.inject({
    method: 'GET',
    url: `/domains/${domain!.id}/diagnose`,
    headers: world.asOwner,
  });
  assert.is(res.statusCode, 200, res.body);
  const body = res.json<DiagnosisBody>();
  assert.is(body.ok, false);
  assert.is(body.senderRules.enforced, true);
  const dmarc = body.senderRules.rules.find((rule) => rule.rule === 'dmarcRecord')!;
  assert.is(dmarc.status, 'fail');
  assert.is(
    dmarc.fix,
    'Publish a TXT record at _dmarc.acme.test: v=DMARC1; p=none; rua=mailto:dmarc-reports@acme.test',
  );
  // No DKIM key is published in this zone: the rule says so, with the record to publish.
  const dkim = body.senderRules.rules.find((rule) => rule.rule === 'dkimAligned')!;
  assert.is(dkim.status, 'fail');
  assert.match(dkim.fix!, /^Publish a TXT record at [^ ]+\._domainkey\.acme\.test: v=DKIM1; k=rsa; p=/);
  const problem = body.problems.find((p) => p.code === 'DMARC_MISSING')!;
  assert.is(problem.severity, 'error');
  assert.match(problem.message, /Direct delivery refuses mail from this domain/);
});

test('a subdomain is covered by its parent: DKIM d=acme.test aligns (relaxed), DMARC found at the parent', async () => {
  dns.zone.txt.set('_dmarc.acme.test', ['v=DMARC1; p=none']);
  // The diagnosis forgets this process's cached answer, so the record just published counts at once.
  const domain = await Domain.findOne({ where: { tenantId: world.tenantId, name: 'acme.test' } });
  const diagnosis = await direct.app.inject({
    method: 'GET',
    url: `/domains/${domain!.id}/diagnose`,
    headers: world.asOwner,
  });
  const dmarc = diagnosis.json<DiagnosisBody>().senderRules.rules.find((rule) => rule.rule === 'dmarcRecord')!;
  assert.equal(dmarc, { rule: 'dmarcRecord', status: 'pass', message: 'A DMARC record covers acme.test.', fix: null });
  const res = await send(direct, world.asKey, 'App <app@news.acme.test>');
  assert.is(res.statusCode, 202, res.body);
  const res2 = await send(direct, world.asKey, 'App <app@acme.test>');
  assert.is(res2.statusCode, 202, res2.body);
});

test('two DMARC records at a subdomain: unusable (receivers ignore them) → refused, named in the message', async () => {
  dns.zone.txt.set('_dmarc.twice.acme.test', ['v=DMARC1; p=none', 'v=DMARC1; p=reject']);
  const res = await send(direct, world.asKey, 'App <app@twice.acme.test>');
  const body = assertErrorBody(res, 403, 'SENDER_RULES_NOT_MET');
  assert.match(
    body.message,
    /^twice\.acme\.test has no usable DMARC record: _dmarc\.twice\.acme\.test has 2 DMARC records, which receivers ignore;/,
  );
});

test('a DMARC look-up that times out does not refuse the send (fail-open)', async () => {
  dns.zone.silent.add('_dmarc.slow.acme.test');
  const res = await send(direct, world.asKey, 'App <app@slow.acme.test>');
  assert.is(res.statusCode, 202, res.body);
  assert.ok(dns.queries.includes('TXT _dmarc.slow.acme.test'));
});

test('a domain no verified domain covers is refused as before (DOMAIN_NOT_VERIFIED): verifying is what aligns DKIM', async () => {
  dns.zone.txt.set('_dmarc.other.test', ['v=DMARC1; p=reject']);
  const res = await send(direct, world.asKey, 'App <app@other.test>');
  assertErrorBody(res, 403, 'DOMAIN_NOT_VERIFIED');
});

test('relay: the rules are not enforced (the relay is the sender the providers judge), a project relay neither', async () => {
  dns.zone.txt.delete('_dmarc.acme.test');
  const deps = {
    db: direct.deps.db,
    config: { ...direct.config, delivery: 'relay' as const, smtpUrl: 'smtp://127.0.0.1:2' },
    secrets: direct.deps.secrets,
    ...direct.workerResources,
  };
  const tenant = {
    tenantId: world.tenantId,
    adminId: null,
    apiKeyId: null,
    role: null,
    isPlatformAdmin: false,
    testMode: false,
  };
  const request = normalizeSend({ from: 'app@norecord.acme.test', to: 'x@example.net', subject: 'Hi', textBody: 'x' });
  assert.equal(await checkReferences(deps, tenant, { requests: [request], fresh: true }), [
    'norecord.acme.test',
    'acme.test',
  ]);
  // The same request under DELIVERY=direct is refused: the record is gone.
  const refused = await checkReferences({ ...deps, config: direct.config }, tenant, {
    requests: [request],
    fresh: true,
  }).catch((e) => e);
  assert.is((refused as { code?: string }).code, 'SENDER_RULES_NOT_MET');
});

test.run();
