// DKIM end to end: a message signed by nodemailer with DkimSigningCache.dkimFor()'s options passes
// mailauth's DKIM verification against the key published in (real, test) DNS.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPairSync } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import nodemailer from 'nodemailer';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { publishRecords, splitTxt, startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';

let ctx: TestContext;
let dns: TestDnsServer;
let world: Awaited<ReturnType<typeof createWorld>>;
let selector: string;

test.before(async () => {
  dns = await startDnsServer();
  ctx = await createTestContext({ env: { DNS_SERVERS: dns.address, PUBLIC_URL: 'https://mail.svc.test' } });
  dns.zone.txt.set('_spf.mail.svc.test', ['v=spf1 ip4:192.0.2.10 -all']);
  await ctx.db.sequelize.query(
    `INSERT INTO platform_settings (key, value) VALUES ('returnPathDomain', '"rp.svc.test"')`,
  );
  world = await createWorld(ctx.app);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/domains',
    headers: world.asOwner,
    payload: { name: 'signed.test' },
  });
  assert.is(created.statusCode, 201);
  selector = created.json().dkimSelector;
  publishRecords(dns.zone, created.json().records);
  const verified = await ctx.app.inject({
    method: 'POST',
    url: `/domains/${created.json().id}/verify`,
    headers: world.asOwner,
  });
  assert.is(verified.json().status, 'verified', verified.body);
});
test.after(async () => {
  await ctx?.close();
  await dns?.close();
});

/** mailauth asks for TXT records; answer them from the test DNS server over the wire. */
function resolverFor(server: string) {
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([server]);
  return async (name: string, type: string) => {
    if (type !== 'TXT') throw Object.assign(new Error(`no ${type} in the test zone`), { code: 'ENODATA' });
    return resolver.resolveTxt(name);
  };
}

async function signedMessage(from: string, dkim: unknown): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  const info = await transport.sendMail({
    from,
    to: 'someone@receiver.test',
    subject: 'Signed',
    text: 'Hello from a verified domain.\n',
    html: '<p>Hello</p>',
    dkim: dkim as never,
  });
  return info.message as Buffer;
}

test('a message signed with dkimFor() passes DKIM against the published key', async () => {
  const dkim = await ctx.workerResources.dkimSigning.dkimFor(world.tenantId, 'signed.test');
  assert.ok(dkim);
  assert.equal([dkim.domainName, dkim.keySelector], ['signed.test', selector]);
  const message = await signedMessage('App <hello@signed.test>', dkim);
  assert.match(message.toString(), /^DKIM-Signature: .*d=signed\.test/m);
  const result = await dkimVerify(message, { resolver: resolverFor(dns.address) as never });
  assert.is(result.results.length, 1);
  const [signature] = result.results;
  assert.is(signature.status.result, 'pass', JSON.stringify(signature.status));
  assert.is(signature.signingDomain, 'signed.test');
  assert.is(signature.selector, selector);
  assert.ok(dns.queries.includes(`TXT ${selector}._domainkey.signed.test`), 'the key came from DNS');
});

test('a subdomain sender is signed with the verified parent (relaxed alignment) and passes', async () => {
  const dkim = await ctx.workerResources.dkimSigning.dkimFor(world.tenantId, 'alerts@news.signed.test');
  assert.is(dkim?.domainName, 'signed.test');
  const result = await dkimVerify(await signedMessage('alerts@news.signed.test', dkim), {
    resolver: resolverFor(dns.address) as never,
  });
  assert.is(result.results[0].status.result, 'pass');
});

test('an altered body fails, and a message checked against another published key fails', async () => {
  const dkim = await ctx.workerResources.dkimSigning.dkimFor(world.tenantId, 'signed.test');
  const original = await signedMessage('hello@signed.test', dkim);
  const altered = Buffer.from(original.toString().replace('Hello from a verified domain.', 'Hello from a forger.'));
  const alteredResult = await dkimVerify(altered, { resolver: resolverFor(dns.address) as never });
  assert.is(alteredResult.results[0].status.result, 'neutral', JSON.stringify(alteredResult.results[0].status));
  assert.match(String(alteredResult.results[0].status.comment), /body hash/);

  const name = `${selector}._domainkey.signed.test`;
  const published = dns.zone.txt.get(name)!;
  const { publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 1024,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  dns.zone.txt.set(name, [splitTxt(`v=DKIM1; k=rsa; p=${publicKey.toString('base64')}`)]);
  try {
    const wrongKey = await dkimVerify(original, { resolver: resolverFor(dns.address) as never });
    assert.is(wrongKey.results[0].status.result, 'fail', JSON.stringify(wrongKey.results[0].status));
  } finally {
    dns.zone.txt.set(name, published);
  }
});

test("a message sent through the pipeline (capture) is DKIM-signed, passes, and bounces to the domain's return path", async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send?sync=true',
    headers: world.asKey,
    payload: {
      from: 'Shop <orders@signed.test>',
      to: 'buyer@receiver.test',
      subject: 'Your order',
      textBody: 'Thanks for your order.',
    },
  });
  assert.is(res.statusCode, 200, res.body);
  assert.is(res.json().status, 'SENT', res.body);
  const [rows] = await ctx.db.sequelize.query(`SELECT raw, envelope_from FROM captured_messages WHERE email_id = :id`, {
    replacements: { id: res.json().id },
  });
  const [captured] = rows as { raw: string; envelope_from: string }[];
  assert.ok(captured, 'the message was captured');
  assert.match(captured.envelope_from, /@bounces\.signed\.test$/);
  const result = await dkimVerify(Buffer.from(captured.raw), { resolver: resolverFor(dns.address) as never });
  assert.is(result.results[0].status.result, 'pass', JSON.stringify(result.results[0].status));
  assert.is(result.results[0].signingDomain, 'signed.test');
});

test("no signing options for unverified, unknown or another tenant's domains", async () => {
  const other = await createWorld(ctx.app);
  assert.is(await ctx.workerResources.dkimSigning.dkimFor(other.tenantId, 'signed.test'), null);
  assert.is(await ctx.workerResources.dkimSigning.dkimFor(world.tenantId, 'unsigned.test'), null);
  assert.is(await ctx.workerResources.dkimSigning.dkimFor(world.tenantId, 'not a domain'), null);
});

test.run();
