// The send pipeline end to end through the real daemon (`svc daemon start` as a child process, its
// Bree worker threads doing the work): 202 → send-worker → a real SMTP server, parsed; the log and
// its timeline; tracking links followed; a 4xx retried by the queue after SEND_RETRY_BASE_MS; a
// scheduled send delivered by the scheduler thread; the maintenance thread pruning old idempotency
// answers; SIGTERM draining and exiting 0 with no job left leased.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AddressObject } from 'mailparser';
import { QueryTypes } from 'sequelize';
import { startSmtpSink, type ReceivedMessage, type SmtpSink } from './helpers/smtp-sink.ts';
import {
  api,
  countRows,
  killAllDaemons,
  openWorldDatabase,
  seedSendWorld,
  startChildDaemon,
  stopChildDaemon,
  type ChildDaemon,
  type SendWorld,
} from './helpers/send-daemon.ts';
import { loadConfig } from '../daemon/config.ts';
import { waitFor } from './helpers/wait.ts';

const RETRY_BASE_MS = 300;

let sink: SmtpSink;
let world: SendWorld;
let daemon: ChildDaemon | null = null;

test.before(async () => {
  sink = await startSmtpSink();
  world = await seedSendWorld({
    SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
    SEND_RETRY_BASE_MS: String(RETRY_BASE_MS),
    LOG_LEVEL: 'warn',
  });
  // Idempotency answers: one from yesterday (the maintenance thread prunes it at start), one fresh.
  const db = await openWorldDatabase(world);
  try {
    await db.sequelize.query(
      `INSERT INTO idempotency_keys (tenant_id, key, body_hash, status_code, response, created_at) VALUES
         (:tenantId, 'old-key', 'h', 202, '{}', now() - interval '25 hours'),
         (:tenantId, 'fresh-key', 'h', 202, '{}', now())`,
      { replacements: { tenantId: world.tenantId } },
    );
  } finally {
    await db.close();
  }
  daemon = await startChildDaemon(world);
});
test.after(async () => {
  killAllDaemons();
  await sink?.close();
  await world?.database.drop();
});

function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  return (Array.isArray(field) ? field : field ? [field] : []).flatMap((a) =>
    a.value.map((v) => `${v.name ? `${v.name} ` : ''}<${v.address}>`),
  );
}

/** A header's value with folding undone (mailparser turns List-* headers into objects). */
function rawHeader(message: ReceivedMessage, name: string): string {
  const head = message.raw.split('\r\n\r\n')[0];
  const match = new RegExp(`^${name}:([^\\r\\n]*(?:\\r\\n[ \\t][^\\r\\n]*)*)`, 'mi').exec(head);
  return match ? match[1].replace(/\r\n[ \t]+/g, ' ').trim() : '';
}

async function timeline(emailId: string): Promise<string[]> {
  const detail = await api(world, 'GET', `/emails/logs/${emailId}`);
  assert.is(detail.status, 200);
  return detail.body.events.map((e: { type: string }) => e.type);
}

test('POST /emails/send → 202 → the send-worker thread delivers it whole; the log shows SENT; tracking links work', async () => {
  const res = await api(world, 'POST', '/emails/send', {
    from: 'Acme Billing <billing@acme.test>',
    to: ['Ana <ana@example.test>'],
    cc: 'cc@example.test',
    subject: 'Your invoice',
    htmlBody: '<html><body><p>Hello <a href="https://acme.test/invoice?id=1&amp;x=2">invoice</a></p></body></html>',
    headers: { 'X-Campaign': 'spring' },
    trackOpens: true,
    trackClicks: true,
    attachments: [
      { filename: 'invoice.txt', content: Buffer.from('total: 42 EUR').toString('base64'), contentType: 'text/plain' },
    ],
  });
  assert.is(res.status, 202, JSON.stringify(res.body));
  assert.is(res.body.status, 'QUEUED');
  assert.is(res.headers.get('x-quota-limit'), '100000');

  const received = await sink.waitFor((m) => m.parsed.messageId === res.body.messageId, 30_000);
  const mail = received.parsed;
  assert.equal(addresses(mail.from), ['Acme Billing <billing@acme.test>']);
  assert.equal(addresses(mail.to), ['Ana <ana@example.test>']);
  assert.equal(addresses(mail.cc), ['<cc@example.test>']);
  assert.equal(received.rcptTo.sort(), ['ana@example.test', 'cc@example.test']);
  assert.is(mail.subject, 'Your invoice');
  assert.is(mail.headers.get('x-campaign'), 'spring');

  // RFC 8058: the one-click URL (no mailto: the service does not receive that mail), and the marker.
  const listUnsubscribe = rawHeader(received, 'List-Unsubscribe');
  const unsubscribeUrl = /<(http:\/\/127\.0\.0\.1:\d+\/u\/[^>]+)>/.exec(listUnsubscribe)?.[1];
  assert.ok(unsubscribeUrl?.startsWith(world.url), listUnsubscribe);
  assert.not.match(listUnsubscribe, /mailto:/);
  assert.is(rawHeader(received, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
  assert.match(
    rawHeader(received, 'DKIM-Signature').replace(/\s+/g, '').toLowerCase(),
    /h=[^;]*list-unsubscribe:list-unsubscribe-post/,
  );

  const html = String(mail.html);
  const pixel = new RegExp(`<img src="(${world.url}/t/o/[^"]+\\.gif)"`).exec(html)?.[1];
  const link = new RegExp(`href="(${world.url}/t/c/[^"]+)"`).exec(html)?.[1];
  assert.ok(pixel, 'the open pixel is in the HTML');
  assert.ok(link, 'the link is rewritten to the click redirect');
  assert.not.match(html, /href="https:\/\/acme\.test\/invoice/);
  assert.is(mail.attachments.length, 1);
  assert.is(mail.attachments[0].filename, 'invoice.txt');
  assert.is(mail.attachments[0].contentType, 'text/plain');
  assert.is(mail.attachments[0].content.toString(), 'total: 42 EUR');

  await waitFor(
    'the log to say SENT',
    async () => (await api(world, 'GET', `/emails/logs/${res.body.id}`)).body.status === 'SENT',
    { timeoutMs: 10_000 },
  );
  const detail = (await api(world, 'GET', `/emails/logs/${res.body.id}`)).body;
  assert.is(detail.messageId, res.body.messageId);
  assert.is(detail.headers['List-Unsubscribe-Post'], 'List-Unsubscribe=One-Click');
  assert.equal(
    detail.events.map((e: { type: string }) => e.type),
    ['queued', 'sent'],
  );

  // The links in the delivered message, followed as a mail client would.
  const opened = await fetch(pixel!);
  assert.is(opened.status, 200);
  assert.is(opened.headers.get('content-type'), 'image/gif');
  const clicked = await fetch(link!, { redirect: 'manual' });
  assert.is(clicked.status, 302);
  assert.is(clicked.headers.get('location'), 'https://acme.test/invoice?id=1&x=2');
  assert.equal(await timeline(res.body.id), ['queued', 'sent', 'opened', 'clicked']);

  // One-click unsubscribe from the header: the address is suppressed and the next send refused.
  const unsubscribed = await fetch(unsubscribeUrl!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'List-Unsubscribe=One-Click',
  });
  assert.is(unsubscribed.status, 200);
  const again = await api(world, 'POST', '/emails/send', {
    from: 'billing@acme.test',
    to: 'ana@example.test',
    subject: 'Again',
    textBody: 'x',
  });
  assert.is(again.status, 422);
  assert.is(again.body.code, 'RECIPIENT_SUPPRESSED');
});

test('SEND_RETRY_BASE_MS: a 4xx is deferred and the queue retries after the configured base', async () => {
  assert.is(loadConfig({}).sendRetryBaseMs, 30_000, 'the default');
  assert.throws(() => loadConfig({ SEND_RETRY_BASE_MS: 'soon' }), /SEND_RETRY_BASE_MS: expected a whole number/);

  let refusals = 0;
  sink.behaviour.onRcpt = (address) =>
    address === 'later@example.test' && refusals++ === 0 ? { code: 451, message: '4.3.0 try again later' } : null;
  try {
    const res = await api(world, 'POST', '/emails/send', {
      from: 'app@acme.test',
      to: 'later@example.test',
      subject: 'Retried',
      textBody: 'x',
    });
    assert.is(res.status, 202);
    const received = await sink.waitFor((m) => m.parsed.messageId === res.body.messageId, 20_000);
    await waitFor(
      'the log to say SENT',
      async () => (await api(world, 'GET', `/emails/logs/${res.body.id}`)).body.status === 'SENT',
      { timeoutMs: 10_000 },
    );
    const detail = (await api(world, 'GET', `/emails/logs/${res.body.id}`)).body;
    assert.equal(
      detail.events.map((e: { type: string }) => e.type),
      ['queued', 'deferred', 'sent'],
    );
    const deferred = detail.events[1];
    assert.ok(
      deferred.data.retryInMs >= RETRY_BASE_MS * 0.8 && deferred.data.retryInMs <= RETRY_BASE_MS * 1.2,
      `retry in ${deferred.data.retryInMs} ms`,
    );
    const retriedAfterMs = received.receivedAt - Date.parse(deferred.createdAt);
    assert.ok(retriedAfterMs >= RETRY_BASE_MS * 0.8 - 50, `delivered ${retriedAfterMs} ms after the deferral`);
    assert.is(refusals, 2, 'one refusal, then accepted');
  } finally {
    sink.behaviour.onRcpt = undefined;
  }
});

test('a scheduled send 2 s ahead is delivered by the scheduler thread at sendAt: PENDING → SENT, its log SENT', async () => {
  const sendAt = new Date(Date.now() + 2_000);
  const created = await api(world, 'POST', '/scheduled-emails', {
    from: 'app@acme.test',
    to: 'later-on@example.test',
    subject: 'Scheduled hello',
    textBody: 'on time',
    sendAt: sendAt.toISOString(),
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is(created.body.status, 'PENDING');

  const received = await sink.waitFor((m) => m.parsed.subject === 'Scheduled hello', 20_000);
  assert.ok(received.receivedAt >= sendAt.getTime(), 'not before sendAt');
  assert.equal(received.rcptTo, ['later-on@example.test']);
  let row: { status: string; emailId: string | null } | undefined;
  await waitFor(
    'the scheduled row to say SENT',
    async () => {
      row = (await api(world, 'GET', '/scheduled-emails?status=SENT')).body.data.find(
        (r: { id: string }) => r.id === created.body.id,
      );
      return row !== undefined;
    },
    { timeoutMs: 10_000 },
  );
  assert.ok(row!.emailId);
  await waitFor(
    'its log to say SENT',
    async () => (await api(world, 'GET', `/emails/logs/${row!.emailId}`)).body.status === 'SENT',
    { timeoutMs: 10_000 },
  );
  assert.is(received.parsed.messageId, (await api(world, 'GET', `/emails/logs/${row!.emailId}`)).body.messageId);
});

test('SIGTERM drains and exits 0: no job left leased, nothing lost, old idempotency answers pruned', async () => {
  // Work in hand at the signal: sends just accepted, and a send scheduled for tomorrow.
  const tomorrow = new Date(Date.now() + 24 * 60 * 60_000).toISOString();
  assert.is(
    (
      await api(world, 'POST', '/scheduled-emails', {
        from: 'app@acme.test',
        to: 'tomorrow@example.test',
        subject: 'Tomorrow',
        textBody: 'x',
        sendAt: tomorrow,
      })
    ).status,
    201,
  );
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) {
    const res = await api(world, 'POST', '/emails/send', {
      from: 'app@acme.test',
      to: `last${i}@example.test`,
      subject: `Last ${i}`,
      textBody: 'x',
    });
    assert.is(res.status, 202);
    ids.push(res.body.id);
  }
  const code = await stopChildDaemon(daemon!);
  assert.is(code, 0, daemon!.output());
  assert.not.match(daemon!.output(), /"level":(50|60)|worker thread failed|stopped unexpectedly|did not stop in time/);
  daemon = null;

  const db = await openWorldDatabase(world);
  try {
    assert.is(
      await countRows(db, `SELECT count(*) FROM jobs WHERE locked_by IS NOT NULL OR locked_until IS NOT NULL`),
      0,
      'no lease survives the shutdown',
    );
    assert.is(
      await countRows(db, `SELECT count(*) FROM jobs WHERE queue = 'scheduled'`),
      1,
      'tomorrow’s send still waits',
    );
    // Every last send either went out or still has its job to go out after the next start.
    const unsent = await countRows(db, `SELECT count(*) FROM email_logs WHERE id IN (:ids) AND status <> 'SENT'`, {
      ids,
    });
    assert.is(
      await countRows(db, `SELECT count(*) FROM jobs WHERE queue = 'send' AND payload->>'emailId' IN (:ids)`, { ids }),
      unsent,
    );
    assert.is(await countRows(db, `SELECT count(*) FROM email_logs WHERE status = 'SENDING'`), 0);
    assert.is(await countRows(db, `SELECT count(*) FROM failed_jobs`), 0);
    const keys = await db.sequelize.query<{ key: string }>(
      `SELECT key FROM idempotency_keys WHERE key IN ('old-key', 'fresh-key')`,
      { type: QueryTypes.SELECT },
    );
    assert.equal(
      keys.map((k) => k.key),
      ['fresh-key'],
      'the maintenance thread pruned the day-old answer',
    );
  } finally {
    await db.close();
  }
});

test.run();
