// Issues 32 (part 2) and 33 through the real inbound SMTP port (Debian's swaks delivering DSNs as
// Postfix and Gmail write them, ARF as Yahoo's feedback loop writes it) and the API: a report applies
// only to the recipients it names that the send went to; an ARF at fbl@ counts only when a listed
// feedback-loop operator signed it (DKIM key published in a real test DNS server, verified by the
// daemon with mailauth through DNS_SERVERS); each (send, recipient) counts once; a tenant is warned,
// then paused, only on evidence. Asserted in the database: statuses, suppressions, events, webhook
// deliveries, kept reports, the tenant's state; and through the API: the tenant, /metrics, the list.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryTypes } from 'sequelize';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { addVerifiedDomain, createAdmin, createWorld } from './helpers/fixtures.ts';
import { startDnsServer, splitTxt, type TestDnsServer } from './helpers/dns-server.ts';
import { freePort, swaks } from './helpers/swaks.ts';
import { startInboundServer } from '../daemon/smtp/inbound.ts';
import { judgeSendingRisk } from '../daemon/modules/emails/sending-risk.ts';
import { DEFAULT_PLATFORM_SETTINGS } from '../shared/schemas/platform.ts';
import { verpReturnPath } from '../daemon/mail/addresses.ts';

const RETURN_PATH_DOMAIN = 'rp.svc.test';
const FBL = 'fbl@mail.example.test';
let ctx: TestContext;
let dns: TestDnsServer;
let inbound: { port: number; stop(): Promise<void> };
let root: Awaited<ReturnType<typeof createAdmin>>;
const logLines: Array<{ details: object; message: string }> = [];
const scratch = mkdtempSync(join(tmpdir(), 'svc-evidence-'));

/** A signing key for `domain`, its public half published at `s1._domainkey.<domain>`. */
function publishDkimKey(domain: string): string {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  dns.zone.txt.set(`s1._domainkey.${domain}`, [splitTxt(`v=DKIM1; k=rsa; p=${p}`)]);
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}
const keys = new Map<string, string>();

test.before(async () => {
  dns = await startDnsServer();
  const port = await freePort();
  ctx = await createTestContext({
    env: {
      PUBLIC_URL: 'http://mail.example.test',
      SMTP_INBOUND_PORT: String(port),
      DNS_SERVERS: dns.address,
      INBOUND_WEBHOOK_TOKEN: 'inbound-token-0123456789',
    },
  });
  root = await createAdmin(ctx.app, { platformAdmin: true });
  await ctx.db.sequelize.query(
    `INSERT INTO platform_settings (key, value) VALUES ('returnPathDomain', '"${RETURN_PATH_DOMAIN}"')`,
  );
  // yahoo.com is on the shipped list of feedback-loop operators; operator.example is not.
  keys.set('yahoo.com', publishDkimKey('yahoo.com'));
  keys.set('operator.example', publishDkimKey('operator.example'));
  const log = {
    info: (details: object, message: string) => logLines.push({ details, message }),
    warn: (details: object, message: string) => logLines.push({ details, message }),
  };
  const started = await startInboundServer({ config: ctx.config, db: ctx.db, secrets: ctx.deps.secrets, log });
  assert.ok(started);
  inbound = started;
});
test.after(async () => {
  await inbound?.stop();
  await ctx?.close();
  await dns?.close();
});

/** The return path the send job writes for a send (tagged under the daemon's key). */
const returnPathOf = (id: string) => verpReturnPath(id, RETURN_PATH_DOMAIN, ctx.deps.secrets.linkSigningKey);

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

/** A tenant with a webhook endpoint subscribed to every event. */
async function tenantWithEndpoint() {
  const world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId);
  const endpoint = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: world.asKey,
    payload: {
      url: 'http://127.0.0.1:9/x',
      events: ['email.bounced', 'email.complained', 'tenant.sending_at_risk'],
    },
  });
  assert.is(endpoint.statusCode, 201, endpoint.body);
  return { ...world, endpointId: endpoint.json().id as string };
}

/**
 * `count` delivered sends of a tenant, one recipient each (`<prefix><n>@example.org`), written with the
 * columns the accept path and the drain write (status SENT, Message-ID, sent_at). The fastest honest
 * way to 1,500 sends: one statement, no relay.
 */
async function seedSends(tenantId: string, count: number, prefix: string): Promise<string[]> {
  const rows = await q<{ id: string }>(
    `INSERT INTO email_logs (tenant_id, status, message_id, from_address, to_addresses, subject, sent_at)
     SELECT :tenantId, 'SENT', '<' || gen_random_uuid() || '@acme.test>', 'John <john@acme.test>',
            ARRAY[:prefix || g || '@example.org'], 'Hello', now()
       FROM generate_series(1, :count) g RETURNING id`,
    { tenantId, count, prefix },
  );
  return rows.map((row) => row.id);
}

async function sendTo(tenantId: string, to: string[]): Promise<{ id: string; messageId: string; verp: string }> {
  const id = randomUUID();
  const messageId = `<${id}@acme.test>`;
  await ctx.db.sequelize.query(
    `INSERT INTO email_logs (id, tenant_id, status, message_id, from_address, to_addresses, subject, sent_at)
     VALUES (:id, :tenantId, 'SENT', :messageId, 'John <john@acme.test>', ARRAY[:to]::text[], 'Hello', now())`,
    { replacements: { id, tenantId, messageId, to } },
  );
  return { id, messageId, verp: returnPathOf(id) };
}

function fill(name: string, values: Record<string, string>): string {
  let text = readFileSync(new URL(`./fixtures/inbound/${name}`, import.meta.url), 'utf8');
  for (const [key, value] of Object.entries(values)) text = text.replaceAll(`{{${key}}}`, value);
  return text.replace(/\r?\n/g, '\r\n');
}

/** `message` with a DKIM signature of `domain`; `maxBodyLength` sets its l= (the body bytes it covers). */
async function signed(message: string, domain: string, maxBodyLength?: number): Promise<string> {
  const result = await dkimSign(message, {
    canonicalization: 'relaxed/relaxed',
    signatureData: [{ signingDomain: domain, selector: 's1', privateKey: keys.get(domain)!, maxBodyLength }],
  } as never);
  return `${result.signatures}${message}`;
}

/** Delivers a raw message to the inbound port; answers swaks's transcript. */
async function deliver(to: string, message: string, from = '<>'): Promise<string> {
  const path = join(scratch, `${randomUUID()}.eml`);
  writeFileSync(path, message);
  const run = await swaks(inbound.port, ['--from', from, '--to', to, '--data', `@${path}`]);
  assert.is(run.code, 0, run.output);
  return run.output;
}

const statusOf = async (id: string) =>
  (await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, { id }))[0].status;
const suppressed = (tenantId: string) =>
  q<{ email: string; reason: string }>(
    `SELECT email, reason FROM suppressions WHERE tenant_id = :tenantId ORDER BY email`,
    { tenantId },
  );
const eventsOf = (id: string) =>
  q<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, data FROM events WHERE email_id = :id ORDER BY created_at`,
    { id },
  );
const deliveriesOf = (endpointId: string, type: string) =>
  q(`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = :endpointId AND event_type = :type`, { endpointId, type });
const keptFor = (id: string) =>
  q<{ disposition: string; kind: string; reason: string }>(
    `SELECT disposition, kind, reason FROM inbound_reports WHERE email_id = :id ORDER BY received_at`,
    { id },
  );
const tenantState = async (tenantId: string) => {
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/tenants/${tenantId}`,
    headers: { authorization: `Bearer ${root.token}` },
  });
  assert.is(res.statusCode, 200, res.body);
  return res.json() as {
    sendingPausedAt: string | null;
    sendingPausedReason: string | null;
    sendingAtRiskAt: string | null;
    sendingAtRiskReason: string | null;
  };
};

const postfixDsn = (verp: string, rcpt: string, messageId: string, toHeader = rcpt) =>
  fill('dsn-postfix.eml', { VERP: verp, RCPT: rcpt, MESSAGE_ID: messageId, TO_HEADER: toHeader });

test('the decision, pure: volume first, then the pause minimums; a warning on the rate alone', () => {
  const levels = DEFAULT_PLATFORM_SETTINGS;
  assert.is(judgeSendingRisk({ sends: 30, complaints: 1, hardBounces: 0 }, levels).level, 'ok');
  assert.is(judgeSendingRisk({ sends: 999, complaints: 50, hardBounces: 500 }, levels).level, 'ok');
  assert.is(judgeSendingRisk({ sends: 1502, complaints: 2, hardBounces: 0 }, levels).level, 'warn');
  assert.is(judgeSendingRisk({ sends: 1505, complaints: 5, hardBounces: 0 }, levels).level, 'pause');
  // 0.3 % of 1,000 is 3 complaints: with the minimum raised to 4, 3 only warn.
  assert.is(judgeSendingRisk({ sends: 1000, complaints: 3, hardBounces: 0 }, levels).level, 'pause');
  assert.is(
    judgeSendingRisk({ sends: 1000, complaints: 3, hardBounces: 0 }, { ...levels, riskMinComplaints: 4 }).level,
    'warn',
  );
  assert.is(judgeSendingRisk({ sends: 1500, complaints: 0, hardBounces: 75 }, levels).level, 'warn');
  assert.is(judgeSendingRisk({ sends: 1500, complaints: 0, hardBounces: 150 }, levels).level, 'pause');
  assert.is(judgeSendingRisk({ sends: 1500, complaints: 0, hardBounces: 74 }, levels).level, 'ok');
});

test('a Postfix DSN naming only an address the send never went to changes nothing and is kept as unmatched', async () => {
  const a = await tenantWithEndpoint();
  const send = await sendTo(a.tenantId, ['ann@example.org', 'bob@example.org', 'cid@example.org']);
  const output = await deliver(send.verp, postfixDsn(send.verp, 'stranger@example.net', send.messageId));
  assert.match(output, /<-\s+250 Accepted: bounce\r?\n/);
  assert.is(await statusOf(send.id), 'SENT');
  assert.equal(await suppressed(a.tenantId), []);
  assert.equal(await eventsOf(send.id), []);
  assert.is((await deliveriesOf(a.endpointId, 'email.bounced')).length, 0);
  assert.equal(await keptFor(send.id), [
    {
      disposition: 'unmatched',
      kind: 'bounce',
      reason: 'names stranger@example.net, whom the send did not go to',
    },
  ]);
  assert.ok(
    logLines.some((l) =>
      /bounce report kept as unmatched: it names stranger@example\.net, whom the send did not go to/.test(l.message),
    ),
  );
});

test('3 recipients, 1 bounced (Postfix DSN): only that one suppressed with its email.bounced; two tenants that wrote to the address', async () => {
  const a = await tenantWithEndpoint();
  const b = await tenantWithEndpoint();
  const send = await sendTo(a.tenantId, ['ann@example.org', 'gone@example.org', 'cid@example.org']);
  const other = await sendTo(b.tenantId, ['gone@example.org']);
  const dsn = postfixDsn(send.verp, 'gone@example.org', send.messageId, 'ann@example.org, gone@example.org');
  assert.match(await deliver(send.verp, dsn), /<-\s+250 Accepted: bounce \(1\)/);
  assert.is(await statusOf(send.id), 'SENT', 'the other two got the message');
  assert.equal(await suppressed(a.tenantId), [{ email: 'gone@example.org', reason: 'bounce' }]);
  const events = await eventsOf(send.id);
  assert.equal(
    events.map((e) => [e.type, e.data.recipients, e.data.bounceType]),
    [['email.bounced', ['gone@example.org'], 'hard']],
  );
  assert.match(
    String(events[0].data.diagnostic),
    /5\.1\.1 550 5\.1\.1 <gone@example\.org>: Recipient address rejected/,
  );
  assert.is((await deliveriesOf(a.endpointId, 'email.bounced')).length, 1);
  // Tenant B also wrote to gone@example.org: a report about A's send is A's alone.
  assert.equal(await suppressed(b.tenantId), []);
  assert.is(await statusOf(other.id), 'SENT');
  assert.is((await deliveriesOf(b.endpointId, 'email.bounced')).length, 0);

  // The same DSN again (a replay, or the MTA's retry): no second event, webhook or count.
  assert.match(await deliver(send.verp, dsn), /<-\s+250 Accepted: bounce\r?\n/);
  assert.is((await eventsOf(send.id)).length, 1);
  assert.is((await deliveriesOf(a.endpointId, 'email.bounced')).length, 1);
  assert.equal(await q(`SELECT recipient, kind FROM recipient_outcomes WHERE email_id = :id`, { id: send.id }), [
    { recipient: 'gone@example.org', kind: 'hard_bounce' },
  ]);

  // The other two bounce later: now every recipient has, and the send is BOUNCED.
  for (const rcpt of ['ann@example.org', 'cid@example.org'])
    await deliver(send.verp, postfixDsn(send.verp, rcpt, send.messageId));
  assert.is(await statusOf(send.id), 'BOUNCED');
});

test('a Gmail DSN to a one-recipient send bounces it; a bounce naming nobody applies only to a one-recipient send', async () => {
  const a = await tenantWithEndpoint();
  const single = await sendTo(a.tenantId, ['nosuch@example.org']);
  const gmail = fill('dsn-gmail.eml', { VERP: single.verp, RCPT: 'nosuch@example.org', MESSAGE_ID: single.messageId });
  assert.match(await deliver(single.verp, gmail), /<-\s+250 Accepted: bounce \(1\)/);
  assert.is(await statusOf(single.id), 'BOUNCED');
  assert.equal(await suppressed(a.tenantId), [{ email: 'nosuch@example.org', reason: 'bounce' }]);

  // A non-standard bounce (no DSN, no address in it) to a send with two recipients: kept as unmatched.
  const pair = await sendTo(a.tenantId, ['one@example.org', 'two@example.org']);
  const anonymous = [
    'From: MAILER-DAEMON@legacy.example.org',
    `To: ${pair.verp}`,
    'Subject: Returned mail: see transcript for details',
    '',
    'The original message was received and could not be delivered: 550 5.1.1 user unknown',
    '',
  ].join('\r\n');
  assert.match(await deliver(pair.verp, anonymous), /<-\s+250 Accepted: bounce\r?\n/);
  assert.is(await statusOf(pair.id), 'SENT');
  assert.equal(await keptFor(pair.id), [
    { disposition: 'unmatched', kind: 'bounce', reason: 'names no recipient, and the send went to 2 recipients' },
  ]);
  // The same to a send with one recipient: it is that recipient's bounce.
  const lone = await sendTo(a.tenantId, ['lone@example.org']);
  assert.match(await deliver(lone.verp, anonymous.replace(pair.verp, lone.verp)), /250 Accepted: bounce \(1\)/);
  assert.is(await statusOf(lone.id), 'BOUNCED');
});

test('ARF at fbl@: signed by a listed operator → complaint (once); forged, foreign-signed, altered or signed in part (l=) → unverified, nothing changes', async () => {
  const a = await tenantWithEndpoint();
  const send = await sendTo(a.tenantId, ['reader@example.org', 'other@example.org']);
  const arf = (rcpt: string) =>
    fill('arf-yahoo.eml', {
      TO: FBL,
      VERP: send.verp,
      RCPT: rcpt,
      MESSAGE_ID: send.messageId,
      REPORT_ID: randomUUID(),
    });

  // Unsigned (issue 33's forgery).
  assert.match(await deliver(FBL, arf('reader@example.org'), 'abuse@isp.example.org'), /250 Accepted: unverified/);
  // Validly signed, but by a domain that runs no feedback loop we listed.
  assert.match(await deliver(FBL, await signed(arf('reader@example.org'), 'operator.example')), /unverified/);
  // Signed by yahoo.com, then changed (another recipient put in).
  const tampered = (await signed(arf('reader@example.org'), 'yahoo.com')).replace(
    'Original-Rcpt-To: reader@example.org',
    'Original-Rcpt-To: other@example.org',
  );
  assert.match(await deliver(FBL, tampered), /unverified/);
  // Signed by yahoo.com with l=40: the signature passes, but covers only the body's first 40 bytes, so the same change
  // leaves it passing. (The whole report after it is anyone's.)
  const partial = (await signed(arf('reader@example.org'), 'yahoo.com', 40)).replace(
    'Original-Rcpt-To: reader@example.org',
    'Original-Rcpt-To: other@example.org',
  );
  assert.match(partial, /\bl=40;/);
  assert.match(await deliver(FBL, partial), /unverified/);
  assert.is(await statusOf(send.id), 'SENT');
  assert.equal(await suppressed(a.tenantId), []);
  assert.equal(await eventsOf(send.id), []);
  const kept = await keptFor(send.id);
  assert.equal(
    kept.map((k) => k.disposition),
    ['unverified', 'unverified', 'unverified', 'unverified'],
  );
  assert.is(kept[0].reason, 'it carries no DKIM signature');
  assert.is(kept[1].reason, 'it is signed by operator.example, not a listed feedback-loop operator');
  assert.match(kept[2].reason, /^its DKIM signature does not verify \(d=yahoo\.com (fail|neutral)/);
  assert.match(kept[3].reason, /^its DKIM signature \(d=yahoo\.com\) leaves \d+ bytes of the body unsigned \(l=\)$/);

  // Signed by yahoo.com (on the shipped list): the complaint counts, for the named recipient only.
  const genuine = await signed(arf('reader@example.org'), 'yahoo.com');
  assert.match(await deliver(FBL, genuine), /<-\s+250 Accepted: complaint \(1\)/);
  assert.ok(dns.queries.includes('TXT s1._domainkey.yahoo.com'), 'the key was looked up through DNS_SERVERS');
  assert.is(await statusOf(send.id), 'SENT', 'one of two recipients complained');
  assert.equal(await suppressed(a.tenantId), [{ email: 'reader@example.org', reason: 'complaint' }]);
  assert.equal(
    (await eventsOf(send.id)).map((e) => [e.type, e.data.recipients]),
    [['email.complained', ['reader@example.org']]],
  );
  assert.is((await deliveriesOf(a.endpointId, 'email.complained')).length, 1);
  // Replayed: nothing more.
  assert.match(await deliver(FBL, genuine), /<-\s+250 Accepted: complaint\r?\n/);
  assert.is((await eventsOf(send.id)).length, 1);
  assert.is((await deliveriesOf(a.endpointId, 'email.complained')).length, 1);

  // Platform admins list what was kept; others may not.
  const list = await ctx.app.inject({
    method: 'GET',
    url: '/platform/inbound-reports?disposition=unverified&limit=100',
    headers: { authorization: `Bearer ${root.token}` },
  });
  assert.is(list.statusCode, 200, list.body);
  const mine = (list.json().data as Array<{ emailId: string; reporter: string; recipients: string[] }>).filter(
    (r) => r.emailId === send.id,
  );
  assert.is(mine.length, 4);
  assert.ok(mine.some((r) => r.reporter === 'abuse@isp.example.org'));
  assert.equal(mine[0].recipients.length, 1);
  const forbidden = await ctx.app.inject({ method: 'GET', url: '/platform/inbound-reports', headers: a.asOwner });
  assert.match(assertErrorBody(forbidden, 403).message, /platform admin/i);
  const metrics = await ctx.app.inject({ method: 'GET', url: '/metrics', headers: a.asKey });
  assert.is(metrics.statusCode, 200, metrics.body);
  const unverified = /svc_inbound_reports_kept_total\{disposition="unverified",kind="complaint"\} (\d+)/.exec(
    metrics.body,
  );
  assert.ok(unverified && Number(unverified[1]) >= 3, metrics.body);
  assert.match(metrics.body, /svc_inbound_reports_kept_total\{disposition="unmatched",kind="bounce"\} \d+/);
});

test('30 sends and 1 complaint: the complaint counts for its recipient, the tenant is neither warned nor paused', async () => {
  const a = await tenantWithEndpoint();
  const [first] = await seedSends(a.tenantId, 30, 'small');
  const verp = returnPathOf(first);
  const [log] = await q<{ message_id: string }>(`SELECT message_id FROM email_logs WHERE id = :id`, { id: first });
  const arf = fill('arf-yahoo.eml', {
    TO: verp,
    VERP: verp,
    RCPT: 'small1@example.org',
    MESSAGE_ID: log.message_id,
    REPORT_ID: randomUUID(),
  });
  assert.match(await deliver(verp, arf), /250 Accepted: complaint \(1\)/);
  assert.is(await statusOf(first), 'COMPLAINED');
  const state = await tenantState(a.tenantId);
  assert.equal(
    [state.sendingPausedAt, state.sendingAtRiskAt],
    [null, null],
    'one complaint in 30 sends (3.3 %) is no evidence',
  );
  const send = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: a.asKey,
    payload: { from: 'john@acme.test', to: 'next@example.org', subject: 'Hi', textBody: 'Hi' },
  });
  assert.is(send.statusCode, 202, send.body);
});

/** ARF complaints from distinct recipients, each at its send's own return path. */
async function complain(ids: string[], reply = /250 Accepted: complaint \(1\)/) {
  for (const id of ids) {
    const [log] = await q<{ message_id: string; to_addresses: string[] }>(
      `SELECT message_id, to_addresses FROM email_logs WHERE id = :id`,
      { id },
    );
    const verp = returnPathOf(id);
    const arf = fill('arf-yahoo.eml', {
      TO: verp,
      VERP: verp,
      RCPT: log.to_addresses[0],
      MESSAGE_ID: log.message_id,
      REPORT_ID: randomUUID(),
    });
    assert.match(await deliver(verp, arf), reply);
  }
}

test('1,500 sends: 2 complaints from distinct recipients (0.13 %) warn; 5 (0.33 %) pause; the numbers are shown', async () => {
  const a = await tenantWithEndpoint();
  const ids = await seedSends(a.tenantId, 1500, 'bulk');
  await complain(ids.slice(0, 2));
  // A replayed ARF (same send, same recipient) changes no rate.
  await complain(ids.slice(0, 1), /<-\s+250 Accepted: complaint\r?\n/);
  let state = await tenantState(a.tenantId);
  assert.is(state.sendingPausedAt, null, 'warned, not paused');
  assert.ok(state.sendingAtRiskAt);
  assert.is(
    state.sendingAtRiskReason,
    'complaint rate 0.13 % (2 complaints from distinct recipients over the last 1500 sends) is at or above the 0.1 % warning level',
  );
  const warnings = await q<{ data: Record<string, unknown> }>(
    `SELECT data FROM events WHERE tenant_id = :t AND type = 'tenant.sending_at_risk'`,
    { t: a.tenantId },
  );
  assert.is(warnings.length, 1);
  assert.equal([warnings[0].data.level, warnings[0].data.sends, warnings[0].data.complaints], ['warn', 1500, 2]);
  assert.is((await deliveriesOf(a.endpointId, 'tenant.sending_at_risk')).length, 1);
  assert.is((await q(`SELECT 1 FROM jobs WHERE queue = 'system'`)).length >= 1, true, 'a mail to the owners is queued');

  await complain(ids.slice(2, 5));
  state = await tenantState(a.tenantId);
  assert.ok(state.sendingPausedAt, 'paused');
  assert.is(
    state.sendingPausedReason,
    'complaint rate 0.33 % (5 complaints from distinct recipients over the last 1500 sends) is at or above the 0.3 % pause level',
  );
  assert.is(state.sendingAtRiskReason, state.sendingPausedReason);
  const refused = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: a.asKey,
    payload: { from: 'john@acme.test', to: 'next@example.org', subject: 'Hi', textBody: 'Hi' },
  });
  assert.is(refused.statusCode, 403);
  assert.is(refused.json().code, 'SENDING_PAUSED');
  assert.match(refused.json().message, /complaint rate 0\.33 % \(5 complaints/);
});

test('1,500 sends: hard bounces from distinct recipients warn at 5 % and pause at 10 %', async () => {
  const a = await tenantWithEndpoint();
  const ids = await seedSends(a.tenantId, 1500, 'many');
  /** Earlier hard bounces, as the outcome path records them (one per distinct recipient). */
  const seedBounces = (from: number, to: number) =>
    ctx.db.sequelize.query(
      `INSERT INTO recipient_outcomes (tenant_id, email_id, recipient, kind)
       SELECT :t, l.id, l.to_addresses[1], 'hard_bounce' FROM email_logs l WHERE l.id IN (:ids)`,
      { replacements: { t: a.tenantId, ids: ids.slice(from, to) } },
    );
  const bounce = async (id: string) => {
    const [log] = await q<{ message_id: string; to_addresses: string[] }>(
      `SELECT message_id, to_addresses FROM email_logs WHERE id = :id`,
      { id },
    );
    const verp = returnPathOf(id);
    assert.match(await deliver(verp, postfixDsn(verp, log.to_addresses[0], log.message_id)), /bounce \(1\)/);
  };
  await seedBounces(0, 73);
  await bounce(ids[73]);
  let state = await tenantState(a.tenantId);
  assert.equal([state.sendingAtRiskAt, state.sendingPausedAt], [null, null], '74 of 1,500 is under 5 %');
  await bounce(ids[74]);
  state = await tenantState(a.tenantId);
  assert.is(state.sendingPausedAt, null);
  assert.match(
    String(state.sendingAtRiskReason),
    /^hard-bounce rate 5 % \(75 hard bounces from distinct recipients over the last 1500 sends\) is at or above the 5 % warning level$/,
  );
  await seedBounces(75, 149);
  await bounce(ids[149]);
  state = await tenantState(a.tenantId);
  assert.ok(state.sendingPausedAt);
  assert.match(
    String(state.sendingPausedReason),
    /^hard-bounce rate 10 % \(150 hard bounces from distinct recipients over the last 1500 sends\) is at or above the 10 % pause level$/,
  );
});

test.run();
