// Issue 52 §2, the forward action: a routed message re-sent through the system-mail queue and a real
// SMTP relay (the sink), its envelope sender rewritten with SRS at the platform's return-path domain
// (and reversed back to the original sender; tampered or stale addresses are not), the platform's
// DKIM signature on top, and the original dkimpy signature still verifying underneath (both checked
// against the test DNS server). A null sender is forwarded with the platform's own return path.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant } from './helpers/fixtures.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { dkimPython, dkimpySign, dkimVerify, publishedDkimKey } from './helpers/dkim-verify.ts';
import { createInboundReader, ownedChunk, type InboundReader } from '../daemon/modules/inbound-mail/reader.ts';
import { checkDkimSignatures } from '../daemon/modules/inbound-mail/feedback-auth.ts';
import { forwardInbound, inboundAuthservId, srsDomain } from '../daemon/modules/inbound-routing/forward.ts';
import { mailauthResolver } from '../daemon/modules/inbound-mail/feedback-auth.ts';
import { srsForward, srsReverse, SRS_MAX_AGE_DAYS } from '../daemon/modules/inbound-routing/srs.ts';
import { createInboundServer } from '../daemon/smtp/inbound.ts';
import { swaks } from './helpers/swaks.ts';
import type { SMTPServer } from 'smtp-server';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PLATFORM_DOMAIN = 'svc-platform.com';
const RETURN_PATH_DOMAIN = 'rp.svc-platform.com';
let ctx: TestContext;
let dns: TestDnsServer;
let sink: SmtpSink;
let reader: InboundReader;
let python: string;
let senderKey: string;
let inbound: SMTPServer;
let inboundPort: number;
let platformHeaders: Record<string, string>;
const scratch = mkdtempSync(join(tmpdir(), 'svc-inbound-forward-'));

test.before(async () => {
  python = dkimPython();
  dns = await startDnsServer();
  sink = await startSmtpSink();
  senderKey = publishedDkimKey(dns.zone, 'sender.test', 's1');
  dns.zone.txt.set(`_spf.${PLATFORM_DOMAIN}`, ['v=spf1 ip4:127.0.0.1 -all']);
  ctx = await createTestContext({
    env: {
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      DNS_SERVERS: dns.address,
      PUBLIC_URL: 'https://svc-platform.com',
    },
  });
  // The platform's sender, verified with the /domains flow, so that system mail (and forwards) are signed.
  const admin = await createAdmin(ctx.app, { platformAdmin: true, email: 'ops@svc-platform.com' });
  const tenantId = await createTenant(admin.id, 'Platform');
  const headers = { authorization: `Bearer ${admin.token}`, 'x-tenant-id': tenantId };
  platformHeaders = headers;
  const patched = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers,
    payload: { defaultFromAddress: `no-reply@${PLATFORM_DOMAIN}`, returnPathDomain: RETURN_PATH_DOMAIN },
  });
  assert.is(patched.statusCode, 200, patched.body);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/domains',
    headers,
    payload: { name: PLATFORM_DOMAIN },
  });
  assert.is(created.statusCode, 201, created.body);
  publishRecords(dns.zone, created.json().records);
  const verified = await ctx.app.inject({ method: 'POST', url: `/domains/${created.json().id}/verify`, headers });
  assert.is(verified.json().status, 'verified', verified.body);
  reader = createInboundReader();
  const log = { info: () => {}, warn: () => {} };
  inbound = createInboundServer({ config: ctx.config, db: ctx.db, secrets: ctx.deps.secrets, log });
  await new Promise<void>((resolve) => inbound.listen(0, '127.0.0.1', () => resolve()));
  inboundPort = (inbound.server.address() as { port: number }).port;
});

test.after(async () => {
  await new Promise<void>((resolve) => (inbound ? inbound.close(() => resolve()) : resolve()));
  await reader?.close();
  await ctx?.close();
  await sink?.close();
  await dns?.close();
});

test('SRS: the address reverses to the sender; a changed hash, another key or an old day does not', () => {
  const key = Buffer.alloc(32, 7);
  const now = Date.UTC(2026, 10, 29);
  const address = srsForward(key, 'Alice.Smith@Sender.Test', RETURN_PATH_DOMAIN, now);
  assert.match(address, /^SRS0=[a-z2-7]{8}=[a-z2-7]{2}=sender\.test=Alice\.Smith@rp\.svc-platform\.com$/);
  const local = address.slice(0, address.lastIndexOf('@'));
  assert.is(srsReverse(key, local, now), 'Alice.Smith@sender.test');
  // Mail systems may change the case of a local part.
  assert.is(srsReverse(key, local.toLowerCase(), now + 86_400_000), 'alice.smith@sender.test');
  assert.is(srsReverse(key, local.replace('=sender.test=', '=evil.test='), now), null);
  assert.is(srsReverse(Buffer.alloc(32, 8), local, now), null);
  assert.is(srsReverse(key, local, now + (SRS_MAX_AGE_DAYS + 1) * 86_400_000), null);
  assert.is(srsReverse(key, 'bounce-123', now), null);
});

async function storedSource(raw: string, mailFrom: string | null): Promise<Uint8Array> {
  const read = await reader.read([ownedChunk(Buffer.from(raw))], {
    report: false,
    dmarc: false,
    unsubscribeTokens: false,
    feedbackSignatures: null,
    routed: {
      authservId: inboundAuthservId(ctx.config),
      dnsServers: [dns.address],
      clientIp: '192.0.2.10',
      heloName: 'mail.sender.test',
      mailFrom,
    },
  });
  return read.routed!.rawGzip;
}

const ORIGINAL = [
  'From: Alice <alice@sender.test>',
  'To: support@acme.test',
  'Subject: Please forward me',
  'Message-ID: <fwd-1@sender.test>',
  'Date: Mon, 04 Mar 2024 10:05:00 +0100',
  '',
  'Hello, this goes on to the helpdesk.',
  '',
].join('\r\n');

test('a forward: SRS envelope at the return-path domain, the platform signature on top, the original one verifying', async () => {
  const signed = await dkimpySign(python, ORIGINAL, { domain: 'sender.test', selector: 's1', privateKey: senderKey });
  const rawGzip = await storedSource(signed, 'alice@sender.test');
  const queued = await forwardInbound(
    { sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets },
    { tenantId: 'tenant-1' },
    { inboundId: 'inbound-1', to: 'Desk <desk@helpdesk.test>', rawGzip, mailFrom: 'alice@sender.test' },
  );
  assert.equal(await runJobs(ctx, 'system'), ['done']);
  const received = await sink.waitFor((m) => m.rcptTo.includes('desk@helpdesk.test'));
  assert.is(received.mailFrom, queued.envelopeFrom);
  assert.match(received.mailFrom, /^SRS0=.+=sender\.test=alice@rp\.svc-platform\.com$/);
  const local = received.mailFrom.slice(0, received.mailFrom.lastIndexOf('@'));
  assert.is(srsReverse(ctx.deps.secrets.linkSigningKey, local), 'alice@sender.test');

  // dkimpy checks the top signature, the platform's; mailauth reports each.
  assert.is(await dkimVerify(python, dns.address, received.raw), 'pass');
  const signatures = await checkDkimSignatures(Buffer.from(received.raw), [dns.address]);
  assert.ok('results' in signatures, JSON.stringify(signatures));
  assert.equal(
    signatures.results.map((r) => [r.signingDomain, r.result]),
    [
      [PLATFORM_DOMAIN, 'pass'],
      ['sender.test', 'pass'],
    ],
  );
  assert.match(received.raw, /\r\nAuthentication-Results: svc-platform\.com;/);
  assert.ok(received.raw.includes('Hello, this goes on to the helpdesk.'));

  // ARC: i=1 sealed by the platform over our verdicts at receipt, and the chain validates.
  const arc1 = await arcOf(received.raw);
  assert.equal(arc1, { result: 'pass', i: 1, sealer: PLATFORM_DOMAIN });
  assert.match(received.raw, /ARC-Authentication-Results: i=1; svc-platform\.com;\r?\n? *dkim=pass/);

  // The forward arrives at a second route of ours and is forwarded on: the chain that arrived passed,
  // so the next seal is i=2 with cv=pass, and the whole chain still validates.
  const again = await storedSource(received.raw, received.mailFrom);
  await forwardInbound(
    { sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets },
    { tenantId: 'tenant-1' },
    { inboundId: 'inbound-1b', to: 'desk-b@helpdesk.test', rawGzip: again, mailFrom: received.mailFrom },
  );
  assert.equal(await runJobs(ctx, 'system'), ['done']);
  const second = await sink.waitFor((m) => m.rcptTo.includes('desk-b@helpdesk.test'));
  assert.equal(await arcOf(second.raw), { result: 'pass', i: 2, sealer: PLATFORM_DOMAIN });
  assert.match(second.raw, /ARC-Seal: i=2; .*cv=pass/s);
});

/** mailauth's ARC verdict on a received message, its keys from the test DNS server. */
async function arcOf(raw: string) {
  const { authenticate } = await import('mailauth');
  const result = await authenticate(Buffer.from(raw), {
    ip: '127.0.0.1',
    helo: 'relay.test',
    sender: 'x@relay.test',
    mta: 'receiver.test',
    resolver: mailauthResolver([dns.address]) as never,
    disableBimi: true,
  });
  const arc = result.arc as unknown as {
    status: { result: string };
    i: number;
    signature?: { signingDomain?: string };
  };
  return { result: arc.status.result, i: arc.i, sealer: arc.signature?.signingDomain ?? null };
}

test('a null sender is forwarded with the platform return path, never an SRS of nothing', async () => {
  const rawGzip = await storedSource(ORIGINAL.replace('Please forward me', 'Undeliverable'), null);
  const queued = await forwardInbound(
    { sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets },
    { tenantId: 'tenant-1' },
    { inboundId: 'inbound-2', to: 'desk2@helpdesk.test', rawGzip, mailFrom: null },
  );
  assert.is(queued.envelopeFrom, null);
  assert.equal(await runJobs(ctx, 'system'), ['done']);
  const received = await sink.waitFor((m) => m.rcptTo.includes('desk2@helpdesk.test'));
  assert.not.match(received.mailFrom, /^SRS0=/);
  assert.ok(received.mailFrom.endsWith(PLATFORM_DOMAIN), received.mailFrom);
});

const DSN = [
  'From: Mail Delivery System <mailer-daemon@helpdesk.test>',
  'To: <RECIPIENT>',
  'Subject: Undelivered Mail Returned to Sender',
  'Message-ID: <dsn-1@helpdesk.test>',
  'Content-Type: text/plain',
  '',
  'desk@helpdesk.test: mailbox full',
  '',
].join('\r\n');

/** swaks delivering `message` to the listener from `from`; answers its transcript and exit code. */
async function deliver(to: string, from: string, message = DSN.replace('RECIPIENT', to)) {
  const path = join(scratch, `${Math.random().toString(36).slice(2)}.eml`);
  writeFileSync(path, message);
  return swaks(inboundPort, ['--from', from, '--to', to, '--data', `@${path}`]);
}

test('a bounce of a forward goes back to the original sender with the null sender; nothing else is taken there', async () => {
  const key = ctx.deps.secrets.linkSigningKey;
  const srs = srsForward(key, 'carol@sender.test', RETURN_PATH_DOMAIN);
  const returned = await deliver(srs, '<>');
  assert.is(returned.code, 0, returned.output);
  assert.match(returned.output, /250 Accepted: returned to the original sender \(1\)/);
  assert.equal(await runJobs(ctx, 'system'), ['done']);
  const bounce = await sink.waitFor((m) => m.rcptTo.includes('carol@sender.test'));
  assert.is(bounce.mailFrom, '');
  assert.match(bounce.raw, /Subject: Undelivered Mail Returned to Sender/);
  assert.match(bounce.raw, /desk@helpdesk\.test: mailbox full/);

  // Not a bounce: a sender there would make us a relay (or send backscatter).
  const withSender = await deliver(srs, 'spammer@elsewhere.test');
  assert.match(withSender.output, /550 <SRS0=[^>]+>: this address takes only bounces/);
  // A hash we did not write, another day's hash, and one past SRS_MAX_AGE_DAYS.
  const local = srs.slice(0, srs.lastIndexOf('@'));
  const forged = srs.replace('=sender.test=carol', '=victim.test=carol');
  const stale = srsForward(
    key,
    'carol@sender.test',
    RETURN_PATH_DOMAIN,
    Date.now() - (SRS_MAX_AGE_DAYS + 1) * 86_400_000,
  );
  for (const address of [forged, stale]) {
    const refused = await deliver(address, '<>');
    assert.match(refused.output, /550 <SRS0=[^>]+>: not a forwarding address of ours/, address);
  }
  // An SRS local part at a domain not ours for SRS is no mailbox at all.
  const elsewhere = await deliver(`${local}@other.test`, '<>');
  assert.match(elsewhere.output, /550 <SRS0=[^>]+>: .*no such mailbox here/);
  for (const run of [withSender, elsewhere]) assert.not.match(run.output, /^<- +354 /m);
  assert.equal(await runJobs(ctx, 'system'), []);
});

test('a forward address that is no address is refused before anything is queued', async () => {
  try {
    await forwardInbound(
      { sequelize: ctx.db.sequelize, config: ctx.config, secrets: ctx.deps.secrets },
      { tenantId: 'tenant-1' },
      { inboundId: 'inbound-3', to: 'not an address', rawGzip: new Uint8Array(), mailFrom: null },
    );
    assert.unreachable('it should have thrown');
  } catch (error) {
    assert.match((error as Error).message, /is no address/);
  }
  assert.equal(await runJobs(ctx, 'system'), []);
});

test('the SRS domain is kept, not read per message; a change through the platform API applies at once', async () => {
  const deps = { sequelize: ctx.db.sequelize, config: ctx.config };
  const setReturnPath = async (domain: string) => {
    const patched = await ctx.app.inject({
      method: 'PATCH',
      url: '/platform/settings',
      headers: platformHeaders,
      payload: { returnPathDomain: domain },
    });
    assert.is(patched.statusCode, 200, patched.body);
    assert.is(patched.json().returnPathDomain, domain);
  };
  try {
    assert.is(await srsDomain(deps), RETURN_PATH_DOMAIN);
    // A row changed behind the API (another process would see it within the TTL): this process keeps
    // what it read, so the listener still honours a bounce at the kept domain without reading the row.
    await ctx.db.sequelize.query(
      `UPDATE platform_settings SET value = '"rp-behind.svc-platform.com"' WHERE key = 'returnPathDomain'`,
    );
    assert.is(await srsDomain(deps), RETURN_PATH_DOMAIN);
    const srs = srsForward(ctx.deps.secrets.linkSigningKey, 'dave@sender.test', RETURN_PATH_DOMAIN);
    const returned = await deliver(srs, '<>');
    assert.match(returned.output, /250 Accepted: returned to the original sender \(1\)/);
    assert.equal(await runJobs(ctx, 'system'), ['done']);
    await sink.waitFor((m) => m.rcptTo.includes('dave@sender.test'));

    // Through the API the kept read is dropped: the next message sees the new domain, and the old one
    // is no SRS domain of ours any more.
    await setReturnPath('rp-new.svc-platform.com');
    assert.is(await srsDomain(deps), 'rp-new.svc-platform.com');
    const old = await deliver(
      srsForward(ctx.deps.secrets.linkSigningKey, 'dave@sender.test', RETURN_PATH_DOMAIN),
      '<>',
    );
    assert.match(old.output, /550 <SRS0=[^>]+>: .*no such mailbox here/);
    assert.equal(await runJobs(ctx, 'system'), []);
  } finally {
    await setReturnPath(RETURN_PATH_DOMAIN);
  }
});

test.run();
