// SMTP submission spooled at accept (docs/smtp.md, "Spooled at accept"): with DELIVERY=direct a submitted
// message leaves as its client built it, with the service's headers, signed once at the edge and spooled
// by the accept statement itself (no send job). A daemon (ROLE=all, DELIVERY=direct) takes nodemailer's
// submissions and delivers to an MX host on loopback: the raw message there is checked by dkimpy against
// the test DNS server, carries our Message-ID and no Bcc; the log's detail, timeline and status are the
// old path's. A tenant with open tracking takes the old path (the HTML rewritten). kill -9 right after
// the 250s loses nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import nodemailer from 'nodemailer';
import { QueryTypes } from 'sequelize';
import type { MxHost } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, countRows, openWorldDatabase, seedAnotherTenant, SENDING_DOMAIN } from './helpers/send-daemon.ts';
import { freePort } from './helpers/swaks.ts';
import { splitTxt } from './helpers/dns-server.ts';
import { dkimPython, dkimVerify } from './helpers/dkim-verify.ts';
import { waitFor } from './helpers/wait.ts';
import { base32 } from '../daemon/mail/base32.ts';

/** A log id as a reply address carries it (mail/addresses.ts replyAddress). */
const base32OfId = (id: string) => base32(Buffer.from(id.replace(/-/g, ''), 'hex'), 26);

let mta: MtaFixture;
let mx: MxHost;
let port: number;
let tracked: { tenantId: string; apiKey: string };
/** A tenant with reply addresses on (docs/inbound.md, "Reply addresses"). */
let replying: { tenantId: string; apiKey: string };
let python: string;
/** Until opened, the MX host holds its reply to DATA (the kill -9 test). */
let gate: Promise<void> = Promise.resolve();

test.before(async () => {
  python = dkimPython();
  mta = await MtaFixture.start();
  mx = await mta.mxHost({ data: async () => (await gate, null) }, undefined, ['x.test']);
  port = await freePort();
  await mta.seed({ SMTP_SUBMISSION_PORT: String(port), SMTP_SUBMISSION_HOST: '127.0.0.1' });
  tracked = await seedAnotherTenant(mta.world);
  replying = await seedAnotherTenant(mta.world);
  await mta.withDatabase(async (db) => {
    await db.sequelize.query(`UPDATE tenants SET track_opens = true WHERE id = :id`, {
      replacements: { id: tracked.tenantId },
    });
    const [key] = await db.sequelize.query<{ dkim_selector: string; dkim_public_key: string }>(
      `SELECT dkim_selector, dkim_public_key FROM domains WHERE tenant_id = :id AND name = :name`,
      { replacements: { id: mta.world.tenantId, name: SENDING_DOMAIN }, type: QueryTypes.SELECT },
    );
    mta.dns.zone.txt.set(`${key.dkim_selector}._domainkey.${SENDING_DOMAIN}`, [
      splitTxt(`v=DKIM1; k=rsa; p=${key.dkim_public_key}`),
    ]);
  });
  await mta.startDaemon();
});

test.after(async () => {
  await mta?.close();
});

/** Submits `raw` over STARTTLS with `apiKey` (the world's by default): the server's reply to DATA. */
async function submit(raw: string, envelope: { from: string; to: string[] }, apiKey = mta.world.apiKey) {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'svc', pass: apiKey },
  });
  try {
    const info = await transport.sendMail({ envelope, raw }).catch((error: Error) => {
      throw new Error(
        `${error.message}\n${
          mta.daemon
            ?.output()
            .split('\n')
            .filter((l) => /smtp submission failed/.test(l))
            .slice(-1)[0] ?? ''
        }`,
      );
    });
    return info.response;
  } finally {
    transport.close();
  }
}

const idOf = (response: string) => /queued as ([0-9a-f-]{36})/.exec(response)?.[1] ?? '';

function message(options: { to: string; cc?: string; bcc?: string; subject: string; html?: string }): string {
  return [
    'From: "Acme App" <app@acme.test>',
    `To: ${options.to}`,
    ...(options.cc ? [`Cc: ${options.cc}`] : []),
    ...(options.bcc ? [`Bcc: ${options.bcc}`] : []),
    `Subject: ${options.subject}`,
    'Message-ID: <client-chose-this@app.example>',
    'X-Mailer: SomeApp 1.0',
    'X-Order-Ref: 42',
    'Disposition-Notification-To: app@acme.test',
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'Hello =E2=9C=93 reader,  ',
    'the order ships today.',
    '--b1',
    'Content-Type: text/html; charset=utf-8',
    '',
    options.html ?? '<p>Hello reader, the order ships today.</p>',
    '--b1--',
    '',
  ].join('\r\n');
}

const received = (address: string) => mx.messages.filter((m) => m.to.includes(address));

async function logOf(id: string, status: string, apiKey = mta.world.apiKey) {
  let body: any = null;
  await waitFor(
    `the log of ${id} to say ${status}`,
    async () => {
      const res = await api(mta.world, 'GET', `/emails/logs/${id}`, undefined, apiKey);
      body = res.body;
      return res.status === 200 && body.status === status;
    },
    { timeoutMs: 60_000, details: () => JSON.stringify(body)?.slice(0, 500) },
  );
  return body;
}

test('a submission leaves as it came: signed once at the edge, our Message-ID, no Bcc, no send job', async () => {
  const reply = await submit(
    message({ to: 'reader@x.test', cc: 'copy@x.test', bcc: 'hidden@x.test', subject: 'Order 42' }),
    { from: 'app@acme.test', to: ['reader@x.test', 'copy@x.test', 'hidden@x.test'] },
  );
  const id = idOf(reply);
  assert.ok(id, reply);
  const log = await logOf(id, 'DELIVERED');

  // One message per recipient domain: all three recipients in one delivery.
  await waitFor('the MX host to receive the message', () => received('hidden@x.test').length === 1);
  const [delivered] = received('hidden@x.test');
  assert.equal([...delivered.to].sort(), ['copy@x.test', 'hidden@x.test', 'reader@x.test']);
  const raw = delivered.raw.toString('latin1');
  const head = raw.slice(0, raw.indexOf('\r\n\r\n'));
  assert.is(head.match(/^DKIM-Signature:/gim)?.length, 1, 'signed once');
  assert.is(await dkimVerify(python, mta.dns.address, raw), 'pass');
  assert.match(head, new RegExp(`^Message-ID: <${id}@acme\\.test>$`, 'm'));
  assert.not.match(raw, /client-chose-this/);
  assert.not.match(head, /^Bcc:/im);
  assert.not.match(raw, /hidden@x\.test/, 'the Bcc is in the envelope only');
  assert.not.match(head, /^X-Mailer:|^Disposition-Notification-To:/im);
  assert.match(head, /^X-Order-Ref: 42$/m);
  assert.match(head, /^List-Unsubscribe: <http:\/\/[^>]+\/u\/[^>]+>/m);
  assert.match(head, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
  assert.match(head, new RegExp(`^X-Service-Email-Id: ${id}$`, 'm'));
  assert.match(head, /^Date: /m);
  // The body byte for byte as the client wrote it.
  assert.ok(raw.endsWith(message({ to: '', subject: '' }).slice(message({ to: '', subject: '' }).indexOf('\r\n\r\n'))));

  // The log: the send as parsed, the headers sent, the old path's timeline.
  assert.is(log.messageId, `<${id}@acme.test>`);
  assert.is(log.subject, 'Order 42');
  assert.match(log.bodyText, /^Hello ✓ reader,\r?\nthe order ships today\.$/);
  assert.is(log.bodyHtml, '<p>Hello reader, the order ships today.</p>');
  assert.equal(log.to, ['reader@x.test']);
  assert.equal(log.cc, ['copy@x.test']);
  assert.equal(log.bcc, ['hidden@x.test']);
  assert.is(log.attempts, 1);
  assert.is(log.headers['Message-ID'], `<${id}@acme.test>`);
  assert.is(log.headers['X-Order-Ref'], '42');
  assert.ok(log.headers['List-Unsubscribe'].startsWith('<http://'));
  const types = (log.events as { type: string }[]).map((e) => e.type);
  assert.equal(types.slice(0, 2), ['queued', 'spooled'], JSON.stringify(types));
  assert.ok(types.includes('delivered'), JSON.stringify(types));

  const db = await openWorldDatabase(mta.world);
  try {
    assert.is(
      await countRows(db, `SELECT count(*) FROM email_events WHERE email_id = :id AND type = 'spooled'`, { id }),
      1,
    );
    // No send job was ever made for it (the job key of a send is email:<id>; done jobs are deleted, so
    // none may exist either way) and the spool row is gone once delivered.
    assert.is(await countRows(db, `SELECT count(*) FROM mta_spool WHERE email_id = :id`, { id }), 0);
  } finally {
    await db.close();
  }
});

test('a tenant with open tracking takes the old path: the message is composed, its HTML tracked', async () => {
  const reply = await submit(
    message({ to: 'tracked@x.test', subject: 'Tracked', html: '<html><body><p>Tracked hello</p></body></html>' }),
    { from: 'app@acme.test', to: ['tracked@x.test'] },
    tracked.apiKey,
  );
  const id = idOf(reply);
  assert.ok(id, reply);
  await waitFor('the MX host to receive the tracked message', () => received('tracked@x.test').length === 1);
  const raw = received('tracked@x.test')[0].raw.toString('latin1');
  assert.match(raw, /\/t\/o\/[^"]+\.gif/, 'the open pixel: composed by the worker');
  assert.match(raw, new RegExp(`^Message-ID: <${id}@acme\\.test>`, 'm'));
  assert.is(raw.match(/^DKIM-Signature:/gim)?.length, 1);
});

test("a tenant's reply address is the Reply-To of a submission that sets none, as for a composed send", async () => {
  const on = await api(mta.world, 'PATCH', '/inbound/address', { replyAddresses: true }, replying.apiKey);
  assert.is(on.status, 200, JSON.stringify(on.body));
  assert.is(on.body.replyAddresses, true);
  const bare = idOf(
    await submit(
      message({ to: 'replies@x.test', subject: 'Reply to me' }),
      { from: 'app@acme.test', to: ['replies@x.test'] },
      replying.apiKey,
    ),
  );
  const own = idOf(
    await submit(
      message({ to: 'own@x.test', subject: 'Own Reply-To' }).replace('X-Order-Ref: 42', 'Reply-To: desk@acme.test'),
      { from: 'app@acme.test', to: ['own@x.test'] },
      replying.apiKey,
    ),
  );
  assert.ok(bare && own);
  await waitFor(
    'both messages at the MX host',
    () => received('replies@x.test').length + received('own@x.test').length === 2,
  );
  const headOf = (address: string) => {
    const raw = received(address)[0].raw.toString('latin1');
    return raw.slice(0, raw.indexOf('\r\n\r\n'));
  };
  const tag = /^Reply-To: reply\+([a-z2-7]{26})\.[a-z2-7]+@inbound\.[^\s]+$/m.exec(headOf('replies@x.test'));
  assert.ok(tag, headOf('replies@x.test'));
  // The id in the address is this send's.
  assert.is(tag![1], base32OfId(bare));
  assert.equal(headOf('own@x.test').match(/^Reply-To:.*$/gm), ['Reply-To: desk@acme.test']);
  const log = await logOf(bare, 'DELIVERED', replying.apiKey);
  assert.match(log.headers['Reply-To'], /^reply\+/);
  const db = await openWorldDatabase(mta.world);
  try {
    assert.is(
      await countRows(db, `SELECT count(*) FROM email_events WHERE email_id IN (:ids) AND type = 'spooled'`, {
        ids: [bare, own],
      }),
      2,
      'both took the spooled-at-accept path',
    );
  } finally {
    await db.close();
  }
});

test('kill -9 right after the 250s: every submitted message is still delivered', async () => {
  let open: () => void = () => {};
  gate = new Promise<void>((resolve) => (open = resolve));
  const ids: string[] = [];
  for (let i = 0; i < 5; i += 1) {
    const to = `crash${i}@x.test`;
    ids.push(idOf(await submit(message({ to, subject: `crash ${i}` }), { from: 'app@acme.test', to: [to] })));
  }
  mta.daemon!.child.kill('SIGKILL');
  await mta.daemon!.exit;
  mta.daemon = null;
  open();
  const db = await openWorldDatabase(mta.world);
  try {
    assert.is(
      await countRows(db, `SELECT count(*) FROM email_logs WHERE id IN (:ids)`, { ids }),
      5,
      'every 250 has its log',
    );
    await mta.startDaemon();
    await waitFor(
      'every log to say DELIVERED after the restart',
      async () =>
        (await countRows(db, `SELECT count(*) FROM email_logs WHERE id IN (:ids) AND status = 'DELIVERED'`, {
          ids,
        })) === 5,
      { timeoutMs: 150_000, intervalMs: 250 },
    );
    for (let i = 0; i < 5; i += 1) assert.ok(received(`crash${i}@x.test`).length >= 1, `crash${i} delivered`);
  } finally {
    await db.close();
  }
});

test.run();
