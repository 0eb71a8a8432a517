// Issue 48 §2 through the real inbound SMTP port: report authentication reads what was signed.
// - A genuine feedback report, DKIM-signed by yahoo.com (a listed operator) with dkimpy as a provider
//   signs, with one unsigned Content-Type header added above the signed one (RFC 6376 §8.15): the
//   signature still verifies (it covers the bottom instance), and the MIME reader read the top one,
//   which pointed at a report planted in the complained-about message the report quotes.
// - A delivery report to fbl@ (null sender, naming a send's recipient and its X-Service-Email-Id):
//   bounces count only at the return path the service wrote for the send.
// - A return path built from a send's id (no tag, or not the service's): refused at RCPT.
// Each attack is asserted to change nothing in the database (status, suppressions, recipient outcomes,
// events, the tenant's risk) and to be kept as `unverified` with its reason; a control shows the same
// signed bytes (or the same DSN at the real return path) are read as they were meant.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { startDnsServer, splitTxt, type TestDnsServer } from './helpers/dns-server.ts';
import { freePort, swaks } from './helpers/swaks.ts';
import { dkimPython, dkimpySign } from './helpers/dkim-verify.ts';
import { startInboundServer } from '../daemon/smtp/inbound.ts';
import { verpReturnPath } from '../daemon/mail/addresses.ts';

const RETURN_PATH_DOMAIN = 'rp.svc.test';
const FBL = 'fbl@mail.example.test';
let ctx: TestContext;
let dns: TestDnsServer;
let python: string;
let inbound: { port: number; stop(): Promise<void> };
let yahooKey: string;
const scratch = mkdtempSync(join(tmpdir(), 'svc-trust-'));

test.before(async () => {
  python = dkimPython();
  dns = await startDnsServer();
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  dns.zone.txt.set('s1._domainkey.yahoo.com', [splitTxt(`v=DKIM1; k=rsa; p=${p}`)]);
  yahooKey = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  ctx = await createTestContext({
    env: {
      PUBLIC_URL: 'http://mail.example.test',
      SMTP_INBOUND_PORT: String(await freePort()),
      DNS_SERVERS: dns.address,
    },
  });
  await ctx.db.sequelize.query(
    `INSERT INTO platform_settings (key, value) VALUES ('returnPathDomain', '"${RETURN_PATH_DOMAIN}"')`,
  );
  const log = { info: () => {}, warn: () => {} };
  const started = await startInboundServer({ config: ctx.config, db: ctx.db, secrets: ctx.deps.secrets, log });
  assert.ok(started);
  inbound = started;
});
test.after(async () => {
  await inbound?.stop();
  await ctx?.close();
  await dns?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** A delivered send of a fresh tenant to `to`, as the drain leaves it. */
async function victimSend(to: string) {
  const { tenantId } = await createWorld(ctx.app);
  const id = randomUUID();
  const messageId = `<${id}@acme.test>`;
  await ctx.db.sequelize.query(
    `INSERT INTO email_logs (id, tenant_id, status, message_id, from_address, to_addresses, subject, sent_at)
     VALUES (:id, :tenantId, 'SENT', :messageId, 'John <john@acme.test>', ARRAY[:to]::text[], 'Hello', now())`,
    { replacements: { id, tenantId, messageId, to } },
  );
  return { id, tenantId, messageId, to, verp: verpReturnPath(id, RETURN_PATH_DOMAIN, ctx.deps.secrets.linkSigningKey) };
}

type Victim = Awaited<ReturnType<typeof victimSend>>;

/** A Postfix-like DSN for `victim`'s recipient (hard, 5.1.1), naming its Message-ID and X-Service-Email-Id. */
const dsnFor = (victim: Victim, to: string) =>
  crlf([
    'From: MAILER-DAEMON@mx.example.org (Mail Delivery System)',
    `To: ${to}`,
    'Subject: Undelivered Mail Returned to Sender',
    'Date: Wed, 25 Nov 2026 10:12:03 +0000',
    `Message-ID: <${randomUUID()}@mx.example.org>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-part"',
    '',
    '--dsn-part',
    'Content-Type: text/plain',
    '',
    `<${victim.to}>: 550 5.1.1 user unknown`,
    '',
    '--dsn-part',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.example.org',
    '',
    `Final-Recipient: rfc822; ${victim.to}`,
    'Action: failed',
    'Status: 5.1.1',
    'Diagnostic-Code: smtp; 550 5.1.1 user unknown',
    '',
    '--dsn-part',
    'Content-Type: text/rfc822-headers',
    '',
    `Message-ID: ${victim.messageId}`,
    `X-Service-Email-Id: ${victim.id}`,
    '',
    '--dsn-part--',
  ]);

/** Everything a bounce or complaint would change, for one send and its tenant. */
async function stateOf(send: { id: string; tenantId: string }) {
  return {
    status: (await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, send))[0].status,
    suppressions: await q(`SELECT email, reason FROM suppressions WHERE tenant_id = :tenantId`, send),
    outcomes: await q(`SELECT recipient, kind FROM recipient_outcomes WHERE email_id = :id`, send),
    events: await q(`SELECT type FROM events WHERE email_id = :id`, send),
    tenant: await q(`SELECT sending_paused_at, sending_at_risk_at FROM tenants WHERE id = :tenantId`, send),
  };
}
const UNTOUCHED = {
  status: 'SENT',
  suppressions: [],
  outcomes: [],
  events: [],
  tenant: [{ sending_paused_at: null, sending_at_risk_at: null }],
};

const keptFor = (id: string) =>
  q<{ disposition: string; kind: string; reason: string }>(
    `SELECT disposition, kind, reason FROM inbound_reports WHERE email_id = :id ORDER BY received_at`,
    { id },
  );

const crlf = (lines: string[]) => `${lines.join('\r\n')}\r\n`;

/** Delivers a raw message to the inbound port with swaks; answers the transcript. */
async function deliver(to: string, message: string, from = '<>'): Promise<string> {
  const path = join(scratch, `${randomUUID()}.eml`);
  writeFileSync(path, message);
  const run = await swaks(inbound.port, ['--from', from, '--to', to, '--data', `@${path}`]);
  assert.is(run.code, 0, run.output);
  return run.output;
}

test('a signed feedback report with an unsigned Content-Type added above the signed one changes nothing and is kept as unverified', async () => {
  const victim = await victimSend('reader@example.org');
  const planted = 'planted-boundary';
  // A genuine Yahoo report about a message the attacker sent to a Yahoo user: Yahoo quotes that
  // message whole, so its body (the attacker's) is inside what Yahoo signed. It carries a report of its own.
  const genuine = crlf([
    'From: Yahoo! Mail AntiSpam Feedback <feedback@arf.mail.yahoo.com>',
    'To: fbl@spammer.example',
    'Subject: FW: Cheap pills',
    'Date: Wed, 25 Nov 2026 10:30:00 +0000',
    `Message-ID: <${randomUUID()}@arf.mail.yahoo.com>`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="yahoo-part"',
    '',
    '--yahoo-part',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is an email abuse report for an email message received from IP 198.51.100.9',
    '',
    '--yahoo-part',
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'User-Agent: Yahoo!-Mail-Feedback/2.0',
    'Version: 1',
    'Original-Mail-From: <seller@spammer.example>',
    'Original-Rcpt-To: someone@yahoo.com',
    '',
    '--yahoo-part',
    'Content-Type: message/rfc822',
    '',
    'From: seller@spammer.example',
    'To: someone@yahoo.com',
    'Subject: Cheap pills',
    'Content-Type: text/plain',
    '',
    `--${planted}`,
    'Content-Type: message/feedback-report',
    '',
    'Feedback-Type: abuse',
    'Version: 1',
    `Original-Mail-From: <${victim.verp}>`,
    `Original-Rcpt-To: ${victim.to}`,
    '',
    `--${planted}`,
    'Content-Type: text/rfc822-headers',
    '',
    `Message-ID: ${victim.messageId}`,
    `X-Service-Email-Id: ${victim.id}`,
    '',
    `--${planted}--`,
    '',
    '--yahoo-part--',
  ]);
  const signedReport = await dkimpySign(python, genuine, { domain: 'yahoo.com', selector: 's1', privateKey: yahooKey });
  assert.match(signedReport, /h=[^;]*content-type/i, 'Yahoo signs its Content-Type');
  const attack = `Content-Type: multipart/report; report-type=feedback-report; boundary="${planted}"\r\n${signedReport}`;

  const reply = await deliver(FBL, attack, 'relay@spammer.example');
  assert.match(reply, /<-\s+250 Accepted: unverified\r?\n/);
  assert.equal(await stateOf(victim), UNTOUCHED);
  const kept = await keptFor(victim.id);
  assert.equal(
    kept.map((k) => [k.disposition, k.kind]),
    [['unverified', 'complaint']],
  );
  assert.match(kept[0].reason, /^it carries 2 Content-Type headers, where RFC 5322 allows one/);

  // Control: the same signed bytes without the added header verify, and are read as Yahoo wrote them —
  // a report about a message of the attacker's, none of ours — so the victim's send is still untouched.
  assert.match(await deliver(FBL, signedReport, 'relay@spammer.example'), /<-\s+250 Accepted: complaint\r?\n/);
  assert.equal(await stateOf(victim), UNTOUCHED);
  assert.is((await keptFor(victim.id)).length, 1);
});

test('a delivery report that comes to fbl@ (null sender, naming a send and its recipient) changes nothing and is kept as unverified', async () => {
  const victim = await victimSend('reader@example.org');
  // Signed by a listed feedback-loop operator, even: a bounce is no complaint, and counts only at a return path.
  const attack = await dkimpySign(python, dsnFor(victim, FBL), {
    domain: 'yahoo.com',
    selector: 's1',
    privateKey: yahooKey,
  });
  assert.match(await deliver(FBL, attack), /<-\s+250 Accepted: unverified\r?\n/);
  assert.equal(await stateOf(victim), UNTOUCHED);
  const kept = await keptFor(victim.id);
  assert.equal(
    kept.map((k) => [k.disposition, k.kind]),
    [['unverified', 'bounce']],
  );
  assert.match(kept[0].reason, /^it is a delivery report that did not come to the return path/);

  // Control: the same report at the return path the service wrote for the send is a hard bounce.
  assert.match(await deliver(victim.verp, dsnFor(victim, victim.verp)), /<-\s+250 Accepted: bounce \(1\)/);
  const after = await stateOf(victim);
  assert.is(after.status, 'BOUNCED');
  assert.equal(after.suppressions, [{ email: victim.to, reason: 'bounce' }]);
});

test('a return path naming a real send but not written by the service (no tag, a wrong one, another send’s) is refused at RCPT; nothing changes', async () => {
  const victim = await victimSend('reader@example.org');
  const other = await victimSend('someone@example.org');
  const otherTag = other.verp.split('@')[0].split('-').pop()!;
  const forged = [
    `bounce-${victim.id}@${RETURN_PATH_DOMAIN}`,
    `bounce-${victim.id}-0123456789abcdef@${RETURN_PATH_DOMAIN}`,
    `bounce-${victim.id}-${otherTag}@${RETURN_PATH_DOMAIN}`,
  ];
  for (const to of forged) {
    const path = join(scratch, `${randomUUID()}.eml`);
    writeFileSync(path, dsnFor(victim, to));
    const run = await swaks(inbound.port, ['--from', '<>', '--to', to, '--data', `@${path}`]);
    assert.is.not(run.code, 0, run.output);
    assert.match(run.output, /<\*\* 550 <[^>]+>: this server receives only bounces/, to);
  }
  assert.equal(await stateOf(victim), UNTOUCHED);
  assert.equal(await keptFor(victim.id), []);
  // The service's own: a bounce.
  assert.match(await deliver(victim.verp, dsnFor(victim, victim.verp)), /<-\s+250 Accepted: bounce \(1\)/);
});

test.run();
