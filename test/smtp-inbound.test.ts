// The inbound SMTP listener with real peers: mail is sent through a real SMTP sink (so the VERP
// return path and List-Unsubscribe are the ones the send path really writes), then Debian's swaks
// delivers DSNs, a plain NDR, an ARF report and an unsubscribe mail written from the RFCs' examples.
// Asserted: the SMTP replies, log status, timeline, suppressions, events and webhook deliveries.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createWorld } from './helpers/fixtures.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { makeSelfSignedPair } from './helpers/certificates.ts';
import { freePort, swaks } from './helpers/swaks.ts';
import { createInboundServer, startInboundServer } from '../daemon/smtp/inbound.ts';
import { verpReturnPath } from '../daemon/mail/addresses.ts';

let ctx: TestContext;
let sink: SmtpSink;
let inbound: { port: number; stop(): Promise<void> };
let world: Awaited<ReturnType<typeof createWorld>>;
let endpointId: string;
const logLines: Array<{ details: object; message: string }> = [];
const scratch = mkdtempSync(join(tmpdir(), 'svc-inbound-'));

test.before(async () => {
  sink = await startSmtpSink();
  const port = await freePort();
  ctx = await createTestContext({
    env: {
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      PUBLIC_URL: 'http://mail.example.test',
      SMTP_INBOUND_PORT: String(port),
    },
  });
  world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId);
  // Bounces routed through the customer's domain: platform setting on, bounces.acme.test checked.
  await ctx.db.sequelize.query(
    `INSERT INTO platform_settings (key, value) VALUES ('returnPathDomain', '"rp.svc.test"')`,
  );
  await ctx.db.sequelize.query(
    `UPDATE domains SET record_checks = CAST(:checks AS jsonb) WHERE tenant_id = :tenantId`,
    {
      replacements: {
        tenantId: world.tenantId,
        checks: JSON.stringify({
          returnPath: { status: 'verified', found: ['rp.svc.test'], checkedAt: new Date().toISOString() },
        }),
      },
    },
  );
  const endpoint = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: world.asKey,
    payload: { url: 'http://127.0.0.1:9/x', events: ['email.bounced', 'email.complained', 'contact.unsubscribed'] },
  });
  endpointId = endpoint.json().id;
  const log = {
    info: (details: object, message: string) => logLines.push({ details, message }),
    warn: (details: object, message: string) => logLines.push({ details, message }),
  };
  const started = await startInboundServer({ config: ctx.config, db: ctx.db, secrets: ctx.deps.secrets, log });
  assert.ok(started);
  inbound = started;
  assert.is(inbound.port, port);
});
test.after(async () => {
  await inbound?.stop();
  await ctx?.close();
  await sink?.close();
});

const q = <T extends object>(sql: string, replacements: Record<string, unknown> = {}) =>
  ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });

function header(raw: string, name: string): string {
  const match = new RegExp(`^${name}:([^\\r\\n]*(?:\\r\\n[ \\t][^\\r\\n]*)*)`, 'mi').exec(raw);
  return (match?.[1] ?? '').replace(/\r\n[ \t]+/g, ' ').trim();
}

/** Sends through the API and the real relay; answers the log id and the message as the relay got it. */
async function sendOne(to: string) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send',
    headers: world.asKey,
    payload: { from: 'John <john@acme.test>', to, subject: 'Hello', textBody: 'Hello there.' },
  });
  assert.is(res.statusCode, 202, res.body);
  const id: string = res.json().id;
  assert.equal(await runJobs(ctx, 'send'), ['done']);
  const received = await sink.waitFor((m) => m.rcptTo.includes(to));
  const [log] = await q<{ message_id: string }>(`SELECT message_id FROM email_logs WHERE id = :id`, { id });
  return { id, received, messageId: log.message_id };
}

/** A fixture with its placeholders filled, written where swaks can read it. */
function fixtureFile(name: string, values: Record<string, string>): string {
  let text = readFileSync(new URL(`./fixtures/inbound/${name}`, import.meta.url), 'utf8');
  for (const [key, value] of Object.entries(values)) text = text.replaceAll(`{{${key}}}`, value);
  const path = join(scratch, `${randomUUID()}-${name}`);
  writeFileSync(path, text.replace(/\r?\n/g, '\r\n'));
  return path;
}

const timeline = (id: string) =>
  q<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, data FROM email_events WHERE email_id = :id ORDER BY created_at, id`,
    { id },
  );
const events = (id: string) =>
  q<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, data FROM events WHERE email_id = :id ORDER BY created_at`,
    { id },
  );
const deliveries = (type: string) =>
  q<{ payload: unknown }>(`SELECT 1 FROM webhook_deliveries WHERE endpoint_id = :endpointId AND event_type = :type`, {
    endpointId,
    type,
  });

test('the send path writes the VERP return path, and List-Unsubscribe carries the mailto beside the https URL', async () => {
  const { id, received } = await sendOne('first@example.org');
  assert.is(received.mailFrom, verpReturnPath(id, 'bounces.acme.test', ctx.deps.secrets.linkSigningKey));
  assert.match(received.mailFrom, /^bounce-[0-9a-f-]{36}-[0-9a-f]{16}@bounces\.acme\.test$/);
  const listUnsubscribe = header(received.raw, 'List-Unsubscribe');
  assert.match(
    listUnsubscribe,
    /^<http:\/\/mail\.example\.test\/u\/[A-Za-z0-9_-]+>, <mailto:unsubscribe@mail\.example\.test\?subject=unsubscribe%20[A-Za-z0-9_-]+>$/,
  );
  // Both name the same token: either way of unsubscribing acts on the same recipient.
  const [, urlToken, mailToken] = /\/u\/([A-Za-z0-9_-]+)>.*%20([A-Za-z0-9_-]+)>$/.exec(listUnsubscribe)!;
  assert.is(mailToken, urlToken);
  assert.is(header(received.raw, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
});

/** A send to `rcpt`, then the report fixture `name` about it to its return path: answered 250 with one bounce; its log. */
async function bouncedBy(name: string, rcpt: string): Promise<{ id: string; status: string; error: string }> {
  const { id, messageId, received } = await sendOne(rcpt);
  const file = fixtureFile(name, { VERP: received.mailFrom, RCPT: rcpt, MESSAGE_ID: messageId });
  const run = await swaks(inbound.port, ['--from', '<>', '--to', received.mailFrom, '--data', `@${file}`]);
  assert.is(run.code, 0, run.output);
  assert.match(run.output, /<-\s+250 Accepted: bounce \(1\)/);
  const [log] = await q<{ status: string; error: string }>(`SELECT status, error FROM email_logs WHERE id = :id`, {
    id,
  });
  return { id, ...log };
}

test('a DSN with a 5.1.1 status: log BOUNCED, recipient suppressed, email.bounced emitted and queued for webhooks', async () => {
  const log = await bouncedBy('dsn-hard.eml', 'gone@example.org');
  const { id } = log;
  assert.is(log.status, 'BOUNCED');
  assert.match(log.error, /5\.1\.1.*User unknown/);
  assert.equal(
    await q(`SELECT email, reason FROM suppressions WHERE tenant_id = :tenantId AND email = 'gone@example.org'`, {
      tenantId: world.tenantId,
    }),
    [{ email: 'gone@example.org', reason: 'bounce' }],
  );
  const bounced = (await timeline(id)).filter((e) => e.type === 'bounced');
  assert.is(bounced.length, 1);
  assert.is(bounced[0].data.bounceType, 'hard');
  assert.equal(bounced[0].data.recipients, ['gone@example.org']);
  const [event] = (await events(id)).filter((e) => e.type === 'email.bounced');
  assert.is(event.data.emailId, id);
  assert.is(event.data.bounceType, 'hard');
  assert.ok((await deliveries('email.bounced')).length >= 1);
});

test('a DSN with a 4.x.x status (RFC 3464 example): a soft bounce in the timeline, the send stays SENT, nothing suppressed', async () => {
  const { id, messageId, received } = await sendOne('slow@example.org');
  const file = fixtureFile('dsn-soft.eml', {
    VERP: received.mailFrom,
    RCPT: 'slow@example.org',
    MESSAGE_ID: messageId,
  });
  const run = await swaks(inbound.port, ['--from', '<>', '--to', received.mailFrom, '--data', `@${file}`]);
  assert.is(run.code, 0, run.output);
  assert.is((await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, { id }))[0].status, 'SENT');
  const bounced = (await timeline(id)).filter((e) => e.type === 'bounced');
  assert.is(bounced.length, 1);
  assert.is(bounced[0].data.bounceType, 'soft');
  assert.match(String(bounced[0].data.diagnostic), /4\.0\.0 426 connection timed out/);
  assert.is((await q(`SELECT 1 FROM suppressions WHERE email = 'slow@example.org'`)).length, 0);
});

test('a DSN whose diagnostic decodes to U+0000 (quoted-printable =00) is recorded with U+FFFD, not refused with a 451', async () => {
  const log = await bouncedBy('dsn-nul.eml', 'nul@example.org');
  assert.is(log.status, 'BOUNCED');
  assert.ok(log.error.includes('User\ufffd unknown'), log.error);
});

test('a plain non-delivery report (no DSN) to the return path bounces the send; an out-of-office reply does not', async () => {
  const { id, received } = await sendOne('nobody@example.org');
  const ooo = await swaks(inbound.port, [
    '--from',
    'nobody@example.org',
    '--to',
    received.mailFrom,
    '--header',
    'Subject: Out of office',
    '--body',
    'I am away until Monday.',
  ]);
  assert.is(ooo.code, 0, ooo.output);
  assert.match(ooo.output, /250 Accepted: ignored/);
  assert.is((await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, { id }))[0].status, 'SENT');

  const file = fixtureFile('ndr-plain.eml', { VERP: received.mailFrom, RCPT: 'nobody@example.org' });
  const run = await swaks(inbound.port, ['--from', '<>', '--to', received.mailFrom, '--data', `@${file}`]);
  assert.is(run.code, 0, run.output);
  const [log] = await q<{ status: string; error: string }>(`SELECT status, error FROM email_logs WHERE id = :id`, {
    id,
  });
  assert.is(log.status, 'BOUNCED');
  assert.match(log.error, /5\.1\.1/);
  assert.equal(await q(`SELECT reason FROM suppressions WHERE email = 'nobody@example.org'`), [{ reason: 'bounce' }]);
});

test('an ARF complaint (RFC 5965 example) to the return path: COMPLAINED, suppressed, email.complained queued for webhooks', async () => {
  const { id, messageId, received } = await sendOne('angry@example.org');
  const file = fixtureFile('arf-complaint.eml', {
    TO: received.mailFrom,
    VERP: received.mailFrom,
    RCPT: 'angry@example.org',
    MESSAGE_ID: messageId,
    EMAIL_ID: id,
  });
  const run = await swaks(inbound.port, ['--from', '<>', '--to', received.mailFrom, '--data', `@${file}`]);
  assert.is(run.code, 0, run.output);
  assert.match(run.output, /250 Accepted: complaint \(1\)/);
  assert.is(
    (await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, { id }))[0].status,
    'COMPLAINED',
  );
  assert.equal(await q(`SELECT reason, email_id FROM suppressions WHERE email = 'angry@example.org'`), [
    { reason: 'complaint', email_id: id },
  ]);
  const [event] = (await events(id)).filter((e) => e.type === 'email.complained');
  assert.equal(event.data.recipients, ['angry@example.org']);
  assert.is(event.data.diagnostic, 'abuse');
  assert.ok((await deliveries('email.complained')).length >= 1);
});

test('a forged, unsigned ARF complaint at the feedback-loop address changes nothing and is kept as unverified', async () => {
  // Issue 33's attack: a second tenant with 30 delivered sends; one recipient writes an unsigned ARF
  // naming one of them by its Message-ID and its own address.
  const other = await createWorld(ctx.app);
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    const logId = randomUUID();
    ids.push(logId);
    await ctx.db.sequelize.query(
      `INSERT INTO email_logs (id, tenant_id, status, message_id, from_address, to_addresses, subject, sent_at)
       VALUES (:id, :tenantId, 'SENT', :messageId, 'news@other.test', ARRAY[:to], 'News', now())`,
      {
        replacements: {
          id: logId,
          tenantId: other.tenantId,
          messageId: `<${logId}@other.test>`,
          to: `reader${i}@example.org`,
        },
      },
    );
  }
  const file = fixtureFile('arf-complaint.eml', {
    TO: 'fbl@mail.example.test',
    VERP: 'news@other.test',
    RCPT: 'reader3@example.org',
    MESSAGE_ID: `<${ids[3]}@other.test>`,
    EMAIL_ID: ids[3],
  });
  const run = await swaks(inbound.port, [
    '--from',
    'abuse@isp.example.org',
    '--to',
    'fbl@mail.example.test',
    '--data',
    `@${file}`,
  ]);
  assert.is(run.code, 0, run.output);
  assert.match(run.output, /<-\s+250 Accepted: unverified/);
  assert.is(
    (await q<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, { id: ids[3] }))[0].status,
    'SENT',
  );
  assert.is((await q(`SELECT 1 FROM suppressions WHERE tenant_id = :t`, { t: other.tenantId })).length, 0);
  assert.is((await events(ids[3])).length, 0);
  const [tenant] = await q<{ sending_paused_at: Date | null; sending_at_risk_at: Date | null }>(
    `SELECT sending_paused_at, sending_at_risk_at FROM tenants WHERE id = :id`,
    { id: other.tenantId },
  );
  assert.equal(tenant, { sending_paused_at: null, sending_at_risk_at: null });
  assert.equal(
    await q(`SELECT disposition, kind, reason, reporter, recipients FROM inbound_reports WHERE email_id = :id`, {
      id: ids[3],
    }),
    [
      {
        disposition: 'unverified',
        kind: 'complaint',
        reason: 'it carries no DKIM signature',
        reporter: 'abuse@isp.example.org',
        recipients: ['reader3@example.org'],
      },
    ],
  );
  assert.ok(
    logLines.some((l) => /feedback-loop report kept as unverified: it carries no DKIM signature/.test(l.message)),
  );
});

test('the List-Unsubscribe mailto, sent as a mail client does, unsubscribes and emits contact.unsubscribed', async () => {
  const { id, received } = await sendOne('leaver@example.org');
  const mailto = /<mailto:([^?]+)\?subject=([^>]+)>/.exec(header(received.raw, 'List-Unsubscribe'))!;
  const file = fixtureFile('unsubscribe.eml', {
    RCPT: 'leaver@example.org',
    TO: mailto[1],
    SUBJECT: decodeURIComponent(mailto[2]),
  });
  const run = await swaks(inbound.port, ['--from', 'leaver@example.org', '--to', mailto[1], '--data', `@${file}`]);
  assert.is(run.code, 0, run.output);
  assert.match(run.output, /250 Accepted: unsubscribe/);
  assert.equal(await q(`SELECT reason, detail, email_id FROM suppressions WHERE email = 'leaver@example.org'`), [
    { reason: 'unsubscribe', detail: 'unsubscribe by mail (List-Unsubscribe mailto)', email_id: id },
  ]);
  const [event] = await q<{ data: Record<string, unknown> }>(
    `SELECT data FROM events WHERE type = 'contact.unsubscribed' AND email_id = :id`,
    { id },
  );
  assert.is(event.data.email, 'leaver@example.org');
  assert.ok((await deliveries('contact.unsubscribed')).length >= 1);
  assert.ok((await timeline(id)).some((e) => e.type === 'unsubscribed'));
});

test('mail for anyone else is refused at RCPT with 550 and a sentence; so is a guessed return path', async () => {
  for (const to of [
    'someone@mail.example.test',
    'postmaster@example.org',
    `bounce-${randomUUID()}@bounces.acme.test`,
  ]) {
    const run = await swaks(inbound.port, ['--from', 'spammer@example.net', '--to', to, '--body', 'hi']);
    assert.is.not(run.code, 0, run.output);
    assert.match(
      run.output,
      /<\*\* 550 <[^>]+>: this server receives only bounces, complaints, unsubscribes and DMARC reports/,
    );
  }
  assert.match(logLines.map((l) => l.message).join('\n'), /inbound mail received/);
});

test('EHLO offers SIZE (the HTTP body limit), neither AUTH nor, without a certificate, STARTTLS', async () => {
  const run = await swaks(inbound.port, ['--quit-after', 'EHLO']);
  assert.match(run.output, /250[- ]SIZE 15728640/, run.output);
  assert.not.match(run.output, /AUTH|STARTTLS/);
});

test('a message over the size limit is refused with 552 after DATA', async () => {
  const big = join(scratch, 'big.txt');
  writeFileSync(big, `${'x'.repeat(998)}\r\n`.repeat(16 * 1024));
  const run = await swaks(inbound.port, [
    '--from',
    'someone@example.org',
    '--to',
    'unsubscribe@mail.example.test',
    '--body',
    `@${big}`,
  ]);
  assert.is.not(run.code, 0);
  assert.match(run.output, /<\*\* 552 Message exceeds the 15728640 bytes this server accepts\./);
});

test('with a certificate the listener offers STARTTLS and takes mail over it', async () => {
  const { key, cert } = makeSelfSignedPair(scratch, 'mx', 'mx.mail.example.test');
  const log = { info: () => {}, warn: () => {} };
  const server = createInboundServer(
    { config: ctx.config, db: ctx.db, secrets: ctx.deps.secrets, log },
    { tls: { key: readFileSync(key), cert: readFileSync(cert) } },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  try {
    const port = (server.server.address() as { port: number }).port;
    const run = await swaks(port, [
      '--tls',
      '--from',
      'someone@example.org',
      '--to',
      'unsubscribe@mail.example.test',
      '--header',
      'Subject: unsubscribe',
      '--body',
      'please',
    ]);
    assert.is(run.code, 0, run.output);
    assert.match(run.output, /<-\s+220 .*TLS/i);
    assert.match(run.output, /<~\s+250 Accepted: ignored/);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test.run();
