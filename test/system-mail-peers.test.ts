// System mail as a receiving server sees it. The platform admin verifies the sender's domain with
// the ordinary /domains flow against a real DNS server, sets defaultFromAddress, asks for a password
// reset; the system worker delivers to a real SMTP server. The raw message read there passes
// dkimpy's DKIM verification (python3-dkim, its key looked up in that DNS server) and scores below
// 5 in SpamAssassin (local tests only) with no DKIM or header rule hit. /health/ready says what is
// missing until then. The peers are required: a missing one fails the test with how to install it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant, type AdminFixture } from './helpers/fixtures.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { startSmtpSink, type ReceivedMessage, type SmtpSink } from './helpers/smtp-sink.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { dkimPython, dkimVerify as verifyWithDkimpy, requirePeer, runPeer as run } from './helpers/dkim-verify.ts';

const SENDER_DOMAIN = 'notify.example.com';
let ctx: TestContext;
let dns: TestDnsServer;
let sink: SmtpSink;
let platformAdmin: AdminFixture;
let tenantId: string;

let python = 'python3';

test.before(async () => {
  python = dkimPython();
  requirePeer(['spamassassin'], ['--version'], 'apt-get install spamassassin');
  dns = await startDnsServer();
  sink = await startSmtpSink();
  ctx = await createTestContext({
    env: {
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      DNS_SERVERS: dns.address,
      PUBLIC_URL: 'https://svc.example.com',
      AUTH_RATE_LIMIT_MAX: '1000',
    },
  });
  dns.zone.txt.set('_spf.svc.example.com', ['v=spf1 ip4:127.0.0.1 -all']);
  platformAdmin = await createAdmin(ctx.app, { platformAdmin: true, email: 'ops@example.com' });
  tenantId = await createTenant(platformAdmin.id, 'Platform');
});
test.after(async () => {
  await ctx?.close();
  await sink?.close();
  await dns?.close();
});

const asPlatform = () => ({ authorization: `Bearer ${platformAdmin.token}`, 'x-tenant-id': tenantId });

async function readyWarnings(): Promise<{ code: string; message: string; fix: string }[]> {
  const res = await ctx.app.inject({ method: 'GET', url: '/health/ready' });
  // A warning never makes the node not-ready (this API-only context has no workers to wait for).
  return res.json().warnings;
}

async function dkimVerify(raw: string): Promise<string> {
  return verifyWithDkimpy(python, dns.address, raw);
}

test('until a routable sender is set and verified, /health/ready says so with the fix', async () => {
  // The fallback sender is on PUBLIC_URL's host: routable here, but nothing signs it yet.
  const unset = await readyWarnings();
  assert.equal(
    unset.map((w) => w.code),
    ['SYSTEM_MAIL_UNSIGNED'],
    JSON.stringify(unset),
  );
  assert.match(unset[0].message, 'svc <no-reply@svc.example.com>');

  const patched = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: asPlatform(),
    payload: { defaultFromAddress: `no-reply@${SENDER_DOMAIN}` },
  });
  assert.is(patched.statusCode, 200, patched.body);
  const unsigned = await readyWarnings();
  assert.equal(
    unsigned.map((w) => w.code),
    ['SYSTEM_MAIL_UNSIGNED'],
  );
  assert.match(unsigned[0].fix, 'POST /domains');

  const created = await ctx.app.inject({
    method: 'POST',
    url: '/domains',
    headers: asPlatform(),
    payload: { name: SENDER_DOMAIN },
  });
  assert.is(created.statusCode, 201, created.body);
  publishRecords(dns.zone, created.json().records);
  const verified = await ctx.app.inject({
    method: 'POST',
    url: `/domains/${created.json().id}/verify`,
    headers: asPlatform(),
  });
  assert.is(verified.json().status, 'verified', verified.body);
  assert.equal(await readyWarnings(), []);
});

let received: ReceivedMessage;

test('a password reset arrives from the platform sender, DKIM-signed and aligned, and dkimpy verifies it', async () => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/auth/forgot-password',
    headers: { 'accept-language': 'en' },
    payload: { email: platformAdmin.email },
  });
  assert.is(res.statusCode, 200);
  assert.is(sink.messages.length, 0, 'nothing is delivered inside the request');
  assert.equal(await runJobs(ctx, 'system'), ['done']);
  received = await sink.waitFor((m) => m.rcptTo.includes(platformAdmin.email));
  const mail = received.parsed;
  assert.equal(
    mail.from?.value.map((a) => a.address),
    [`no-reply@${SENDER_DOMAIN}`],
  );
  assert.match(String(mail.messageId), new RegExp(`^<[0-9a-f-]{36}@${SENDER_DOMAIN.replace(/\./g, '\\.')}>$`));
  // SPF-aligned envelope: the return path is on the From domain.
  assert.is(received.mailFrom, `no-reply@${SENDER_DOMAIN}`);
  assert.match(received.raw, new RegExp(`^DKIM-Signature:[^]*?d=${SENDER_DOMAIN.replace(/\./g, '\\.')};`, 'm'));
  assert.match(String(mail.text), /https:\/\/svc\.example\.com\/\S*token=/);
  assert.is(await dkimVerify(received.raw), 'pass');
  // The key really came from DNS, and a tampered copy fails.
  assert.ok(
    dns.queries.some((q) => q.startsWith('TXT ') && q.endsWith(`._domainkey.${SENDER_DOMAIN}`)),
    dns.queries.join(', '),
  );
  assert.is(await dkimVerify(received.raw.replace('password', 'passw0rd')), 'fail');
});

test('SpamAssassin (local tests) scores it below 5 with no DKIM or header rule hit', async () => {
  const report = await run('spamassassin', ['-t', '-L', '-x'], received.raw);
  const status = /^X-Spam-Status: (Yes|No), score=(-?[\d.]+) required=[\d.]+ tests=([^]*?)\n(?=\S)/m.exec(
    report.stdout,
  );
  assert.ok(status, report.stdout.slice(0, 3000) + report.stderr.slice(0, 1000));
  const score = Number(status[2]);
  // tests=A,B,<fold>C autolearn=… : the rule list ends at the first space once folds are joined.
  const rules = status[3]
    .replace(/\s*\n\s*/g, '')
    .split(/\s+/)[0]
    .split(',')
    .filter(Boolean);
  assert.ok(score < 5, `score ${score}: ${rules.join(', ')}`);
  console.log(`SpamAssassin: score ${score}, rules ${rules.join(', ')}`);
  const bad = rules.filter((rule) =>
    /DKIM_(INVALID|ADSP)|^MISSING_|^INVALID_|HEADER|MSGID|FROM_|^DATE_|FORGED|^BAD_|NO_RELAYS_HELO|TO_NO_BRKTS|MIME_HTML_ONLY|HTML_MIME_NO_HTML_TAG/.test(
      rule,
    ),
  );
  assert.equal(bad, [], `rules hit: ${rules.join(', ')} (score ${score})`);
});

test.run();
