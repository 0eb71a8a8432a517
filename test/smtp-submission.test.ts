// Send by SMTP with an API key: Debian's swaks submits (STARTTLS or implicit TLS, AUTH PLAIN and
// LOGIN, an attachment, a Bcc); the message goes through the send pipeline, the worker's job
// handler relays it to a real SMTP sink, DKIM-signed for the verified domain (checked by mailauth
// against the test DNS server). Refusals (credentials, TLS, suppression, quota, From) are SMTP
// replies with the pipeline's sentence and write no log.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Resolver } from 'node:dns/promises';
import { QueryTypes } from 'sequelize';
import pino from 'pino';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createApiKey, createWorld } from './helpers/fixtures.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { runJobs } from './helpers/send-jobs.ts';
import { openSmtp, plainAuth, swaks } from './helpers/smtp-client.ts';
import { startSmtpEdge, type SmtpEdge } from '../daemon/smtp/edge.ts';
import { insecureAuthAllowed } from '../daemon/smtp/submission.ts';
import { selfSignedPair } from '../daemon/smtp/tls.ts';
import { waitFor } from './helpers/wait.ts';

let ctx: TestContext;
let sink: SmtpSink;
let dns: TestDnsServer;
let edge: SmtpEdge;
let world: Awaited<ReturnType<typeof createWorld>>;
let port: number;
let tlsPort: number;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: free } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return free;
}

const silent = pino({ level: 'silent' });

test.before(async () => {
  sink = await startSmtpSink();
  dns = await startDnsServer();
  port = await freePort();
  tlsPort = await freePort();
  ctx = await createTestContext({
    env: {
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      DNS_SERVERS: dns.address,
      PUBLIC_URL: 'http://mail.example.test',
      SMTP_SUBMISSION_PORT: String(port),
      SMTP_SUBMISSION_TLS_PORT: String(tlsPort),
      SMTP_SUBMISSION_HOST: '127.0.0.1',
    },
  });
  dns.zone.txt.set('_spf.mail.example.test', ['v=spf1 ip4:192.0.2.10 -all']);
  world = await createWorld(ctx.app);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/domains',
    headers: world.asOwner,
    payload: { name: 'signed.test' },
  });
  assert.is(created.statusCode, 201, created.body);
  publishRecords(dns.zone, created.json().records);
  const verified = await ctx.app.inject({
    method: 'POST',
    url: `/domains/${created.json().id}/verify`,
    headers: world.asOwner,
  });
  assert.is(verified.json().status, 'verified', verified.body);
  edge = await startSmtpEdge({ ...ctx.deps, log: silent });
});
test.after(async () => {
  await edge?.close();
  await ctx?.close();
  await sink?.close();
  await dns?.close();
});

function resolverFor(server: string) {
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([server]);
  return async (name: string, type: string) => {
    if (type !== 'TXT') throw Object.assign(new Error(`no ${type} in the test zone`), { code: 'ENODATA' });
    return resolver.resolveTxt(name);
  };
}

/** swaks over STARTTLS with AUTH (PLAIN unless told), from signed.test, to `to`; returns the transcript and the queued id. */
async function submit(options: {
  key?: string;
  auth?: 'PLAIN' | 'LOGIN';
  from?: string;
  to?: string;
  rcpt?: string;
  subject?: string;
  headers?: string[];
  extra?: string[];
  implicitTls?: boolean;
}) {
  const to = options.to ?? 'reader@example.test';
  const args = [
    '--server',
    `127.0.0.1:${options.implicitTls ? tlsPort : port}`,
    options.implicitTls ? '--tls-on-connect' : '--tls',
    '--auth',
    options.auth ?? 'PLAIN',
    '--auth-user',
    'svc',
    '--auth-password',
    options.key ?? world.key.key,
    '--from',
    'bounce@signed.test',
    '--to',
    options.rcpt ?? to,
    '--header',
    `From: ${options.from ?? 'Shop <orders@signed.test>'}`,
    '--header',
    `To: ${to}`,
    '--header',
    `Subject: ${options.subject ?? 'Sent by SMTP'}`,
    ...(options.headers ?? []).flatMap((header) => ['--header', header]),
    '--body',
    'Hello from swaks.',
    ...(options.extra ?? []),
  ];
  const result = await swaks(args);
  const queued = /<~ +250 2\.6\.0 Ok: queued as ([0-9a-f-]{36})/.exec(result.output);
  return { ...result, id: queued?.[1] ?? null };
}

async function logsWithSubject(subject: string): Promise<
  {
    id: string;
    status: string;
    to_addresses: string[];
    bcc_addresses: string[];
    api_key_id: string;
    attachments: { filename: string }[];
    headers: Record<string, string>;
  }[]
> {
  return ctx.db.sequelize.query(
    `SELECT id, status, to_addresses, bcc_addresses, api_key_id, attachments, headers FROM email_logs WHERE subject = :subject ORDER BY created_at`,
    { replacements: { subject }, type: QueryTypes.SELECT },
  );
}

test('swaks: STARTTLS + AUTH PLAIN, an attachment and a Bcc → 250 with the id; relayed DKIM-signed with the attachment and the allowed headers', async () => {
  const attachment = join(ctx.dataDir, 'report.csv');
  writeFileSync(attachment, 'month,sent\nnovember,42\n');
  const result = await submit({
    to: 'Ana <ana@example.test>',
    rcpt: 'ana@example.test,hidden@example.test',
    subject: 'Monthly report',
    headers: ['X-Campaign: spring', 'List-Id: <reports.signed.test>', 'X-Mailer: not-this-one'],
    extra: ['--attach-type', 'text/csv', '--attach-name', 'report.csv', '--attach', `@${attachment}`],
  });
  assert.is(result.exitCode, 0, result.output);
  assert.match(result.output, /250-STARTTLS|250 STARTTLS/);
  assert.ok(result.id, result.output);

  const [log] = await logsWithSubject('Monthly report');
  assert.is(log.id, result.id);
  assert.is(log.status, 'QUEUED');
  assert.equal(log.to_addresses, ['"Ana" <ana@example.test>']);
  assert.equal(log.bcc_addresses, ['hidden@example.test']);
  assert.is(log.api_key_id, world.key.id);
  assert.equal(
    log.attachments.map((a) => a.filename),
    ['report.csv'],
  );
  assert.equal(log.headers, { 'X-Campaign': 'spring', 'List-Id': '<reports.signed.test>' });

  assert.equal(await runJobs(ctx, 'send'), ['done']);
  const received = await sink.waitFor((m) => m.parsed.subject === 'Monthly report');
  assert.equal(received.rcptTo.sort(), ['ana@example.test', 'hidden@example.test']);
  assert.not.match(received.raw, /hidden@example\.test/, 'the Bcc is in the envelope only');
  assert.is(received.parsed.headers.get('x-campaign'), 'spring');
  assert.match(received.raw, /^List-Id: <reports\.signed\.test>/im);
  assert.not.match(received.raw, /not-this-one/);
  assert.is(received.parsed.text?.trim(), 'Hello from swaks.');
  assert.is(received.parsed.attachments.length, 1);
  assert.is(received.parsed.attachments[0].filename, 'report.csv');
  assert.is(received.parsed.attachments[0].content.toString(), 'month,sent\nnovember,42\n');
  const dkim = await dkimVerify(Buffer.from(received.raw), { resolver: resolverFor(dns.address) as never });
  assert.is(dkim.results[0].status.result, 'pass', JSON.stringify(dkim.results[0].status));
  assert.is(dkim.results[0].signingDomain, 'signed.test');
  const [sent] = await ctx.db.sequelize.query<{ status: string }>(`SELECT status FROM email_logs WHERE id = :id`, {
    replacements: { id: result.id },
    type: QueryTypes.SELECT,
  });
  assert.is(sent.status, 'SENT');
});

test('swaks: AUTH LOGIN on the implicit-TLS port is accepted too', async () => {
  const result = await submit({ auth: 'LOGIN', implicitTls: true, subject: 'Over implicit TLS' });
  assert.is(result.exitCode, 0, result.output);
  assert.ok(result.id);
  assert.is((await logsWithSubject('Over implicit TLS')).length, 1);
});

test('AUTH before STARTTLS: not advertised, not accepted, MAIL refused with 530 (outside development on loopback)', async () => {
  const plain = await swaks([
    '--server',
    `127.0.0.1:${port}`,
    '--auth',
    'PLAIN',
    '--auth-user',
    'svc',
    '--auth-password',
    world.key.key,
    '--from',
    'a@signed.test',
    '--to',
    'b@example.test',
  ]);
  assert.is.not(plain.exitCode, 0);
  assert.match(plain.output, /Host did not advertise authentication/);
  assert.not.match(plain.output, /235/);

  const client = await openSmtp(port);
  try {
    const ehlo = await client.command('EHLO client.test');
    assert.ok(ehlo.lines.some((line) => /STARTTLS/.test(line)));
    assert.not.ok(
      ehlo.lines.some((line) => /AUTH/.test(line)),
      ehlo.text,
    );
    assert.ok(
      ehlo.lines.some((line) => /SIZE 15728640/.test(line)),
      'SIZE is the HTTP send body limit',
    );
    assert.is((await client.command(`AUTH PLAIN ${plainAuth('svc', world.key.key)}`)).code, 500);
    const mail = await client.command('MAIL FROM:<a@signed.test>');
    assert.is(mail.code, 530);
    assert.match(mail.text, /5\.7\.0 Authentication required: STARTTLS, then AUTH PLAIN or LOGIN with an API key/);
    assert.is((await client.startTls()).code, 220);
    const secured = await client.command('EHLO client.test');
    assert.ok(
      secured.lines.some((line) => /AUTH PLAIN LOGIN/.test(line)),
      secured.text,
    );
    assert.is((await client.command(`AUTH PLAIN ${plainAuth('svc', world.key.key)}`)).code, 235);
  } finally {
    client.close();
  }
  assert.is(insecureAuthAllowed({ nodeEnv: 'development', smtpSubmissionHost: '127.0.0.1' }), true);
  assert.is(insecureAuthAllowed({ nodeEnv: 'development', smtpSubmissionHost: '0.0.0.0' }), false);
  assert.is(insecureAuthAllowed({ nodeEnv: 'production', smtpSubmissionHost: '127.0.0.1' }), false);
});

test('a wrong key and a key without email:send → 535 with the sentence', async () => {
  const wrong = await submit({ key: 'svc_live_not-a-real-key-0000000000000000', subject: 'Wrong key' });
  assert.match(wrong.output, /535 5\.7\.8 The password must be an API key/);
  assert.is.not(wrong.exitCode, 0);
  const readOnly = await createApiKey(world.tenantId, { scopes: ['email:read'] });
  const scoped = await submit({ key: readOnly.key, subject: 'Wrong scope' });
  assert.match(scoped.output, /535 5\.7\.8 This API key lacks the "email:send" scope\./);
  assert.equal(await logsWithSubject('Wrong key'), []);
  assert.equal(await logsWithSubject('Wrong scope'), []);
});

test('a suppressed recipient, an unverified From and an over-quota tenant: the right code and sentence, no log row', async () => {
  const suppressed = await ctx.app.inject({
    method: 'POST',
    url: '/suppressions',
    headers: world.asKey,
    payload: { email: 'gone@example.test', reason: 'manual' },
  });
  assert.is(suppressed.statusCode, 201, suppressed.body);
  const refused = await submit({ to: 'gone@example.test', subject: 'To a suppressed address' });
  assert.match(
    refused.output,
    /<~\* +550 5\.1\.1 Every recipient of this message is on the suppression list; nothing was sent\./,
  );
  assert.equal(await logsWithSubject('To a suppressed address'), []);

  const unverified = await submit({ from: 'news@unverified.test', subject: 'From an unverified domain' });
  assert.match(unverified.output, /<~\* +553 5\.1\.3 unverified\.test is not a verified sending domain of this tenant/);
  assert.equal(await logsWithSubject('From an unverified domain'), []);

  const invalid = await submit({ from: 'not an address', subject: 'From nothing' });
  assert.match(
    invalid.output,
    /<~\* +554 5\.6\.0 The send request is not valid\. \(from is not a valid e-mail address\)/,
  );

  const small = await createWorld(ctx.app);
  await ctx.db.sequelize.query('UPDATE tenants SET monthly_limit = 1 WHERE id = :id', {
    replacements: { id: small.tenantId },
  });
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, small.tenantId, 'small.test');
  const first = await submit({ key: small.key.key, from: 'app@small.test', subject: 'Within quota' });
  assert.ok(first.id, first.output);
  const over = await submit({ key: small.key.key, from: 'app@small.test', subject: 'Over quota' });
  assert.match(
    over.output,
    /<~\* +452 4\.2\.2 The monthly quota of 1 emails is used beyond the 110 % grace \(1 sent\); sending resumes on /,
  );
  assert.equal(await logsWithSubject('Over quota'), []);
  await runJobs(ctx, 'send');
});

test('a body or subject that decodes to U+0000 (quoted-printable =00, an encoded word): 554 naming the field, no log row', async () => {
  // PostgreSQL's text cannot hold U+0000: the accept's statement would fail, and a 451 would make the
  // client retry a message that can never be stored.
  for (const [contentType, field, body] of [
    ['text/plain', 'textBody', 'Hello=00world'],
    ['text/html', 'htmlBody', '<p>Hello=00world</p>'],
  ]) {
    const subject = `A NUL in the ${field}`;
    const refused = await submit({
      subject,
      headers: [`Content-Type: ${contentType}; charset=utf-8`, 'Content-Transfer-Encoding: quoted-printable'],
      extra: ['--body', body],
    });
    assert.ok(
      refused.output.includes(
        `554 5.6.0 The send request is not valid. (${field} contains U+0000, which cannot be stored)`,
      ),
      refused.output,
    );
    assert.equal(await logsWithSubject(subject), []);
  }
  const logsBefore = await ctx.db.sequelize.query<{ n: number }>(`SELECT count(*)::int AS n FROM email_logs`, {
    type: QueryTypes.SELECT,
  });
  const subject = await submit({ subject: '=?utf-8?Q?Hello=00?=' });
  assert.ok(
    subject.output.includes(
      '554 5.6.0 The send request is not valid. (subject contains U+0000, which cannot be stored)',
    ),
    subject.output,
  );
  const logsAfter = await ctx.db.sequelize.query<{ n: number }>(`SELECT count(*)::int AS n FROM email_logs`, {
    type: QueryTypes.SELECT,
  });
  assert.equal(logsAfter, logsBefore, 'no log written for the refused subject');
});

test('the Idempotency-Key header replays the first id; one log row', async () => {
  const first = await submit({ subject: 'Keyed', headers: ['Idempotency-Key: order-77'] });
  const again = await submit({ subject: 'Keyed', headers: ['Idempotency-Key: order-77'] });
  assert.ok(first.id, first.output);
  assert.is(again.id, first.id, again.output);
  const logs = await logsWithSubject('Keyed');
  assert.equal(
    logs.map((log) => log.id),
    [first.id],
  );
  assert.not.ok('Idempotency-Key' in logs[0].headers);
  const other = await submit({ subject: 'Keyed differently', headers: ['Idempotency-Key: order-77'] });
  assert.match(other.output, /554 5\.6\.0 This Idempotency-Key was already used with a different request body/);
  await runJobs(ctx, 'send');
});

test('limits: 50 recipients and 15 MB per message, failed AUTHs throttled per address, connections per key', async () => {
  const client = await openSmtp(tlsPort, { implicitTls: true });
  try {
    await client.command('EHLO client.test');
    assert.is((await client.command(`AUTH PLAIN ${plainAuth('svc', world.key.key)}`)).code, 235);
    assert.is((await client.command('MAIL FROM:<app@signed.test>')).code, 250);
    for (let n = 0; n < 50; n += 1) assert.is((await client.command(`RCPT TO:<r${n}@example.test>`)).code, 250);
    const extra = await client.command('RCPT TO:<r50@example.test>');
    assert.is(extra.code, 452);
    assert.match(extra.text, /Too many recipients: at most 50 per message/);
    assert.is((await client.command('RSET')).code, 250);
    const big = await client.command('MAIL FROM:<app@signed.test> SIZE=15728641');
    assert.is(big.code, 552, big.text);
    assert.match(big.text, /message exceeds fixed maximum message size 15728640/);
  } finally {
    client.close();
  }

  // A second edge on other ports with its own counters: 2 failures allowed, 1 connection per key.
  const strict = await startSmtpEdge(
    { ...ctx.deps, redisPrefix: `${ctx.deps.redisPrefix}strict:`, log: silent },
    {
      ...ctx.config,
      smtpSubmissionPort: await freePort(),
      smtpSubmissionTlsPort: await freePort(),
      authRateLimitMax: 2,
      smtpSubmissionMaxConnectionsPerKey: 1,
    },
  );
  const strictTls = strict.listeners.find((listener) => listener.name === 'submission-tls')!.port;
  const signIn = async (password: string) => {
    const session = await openSmtp(strictTls, { implicitTls: true });
    await session.command('EHLO client.test');
    return { session, reply: await session.command(`AUTH PLAIN ${plainAuth('svc', password)}`) };
  };
  try {
    const held = await signIn(world.key.key);
    assert.is(held.reply.code, 235);
    const second = await signIn(world.key.key);
    assert.is(second.reply.code, 454);
    assert.match(second.reply.text, /already holds 1 SMTP connections/);
    second.session.close();
    held.session.close();
    // The slot comes back once the server has seen the connection close.
    let again = await signIn(world.key.key);
    await waitFor(
      'the closed connection to give its slot back',
      async () => {
        if (again.reply.code === 235) return true;
        again.session.close();
        again = await signIn(world.key.key);
        return again.reply.code === 235;
      },
      { timeoutMs: 5_000, intervalMs: 20 },
    );
    again.session.close();

    for (let n = 0; n < 2; n += 1) {
      const failed = await signIn('svc_live_wrong');
      assert.is(failed.reply.code, 535);
      failed.session.close();
    }
    const throttled = await signIn(world.key.key);
    assert.is(throttled.reply.code, 454);
    assert.match(
      throttled.reply.text,
      /Too many failed sign-ins from 127\.0\.0\.1: the limit is 2; try again in \d+ s\./,
    );
    throttled.session.close();
  } finally {
    await strict.close();
  }
});

test('a configured certificate pair is served, checked at boot, and re-read on SIGHUP', async () => {
  const files = { cert: join(ctx.dataDir, 'smtp-cert.pem'), key: join(ctx.dataDir, 'smtp-key.pem') };
  const first = selfSignedPair('smtp.first.test');
  const second = selfSignedPair('smtp.second.test');
  writeFileSync(files.cert, first.cert);
  writeFileSync(files.key, second.key);
  const config = {
    ...ctx.config,
    smtpSubmissionPort: null,
    smtpSubmissionTlsPort: await freePort(),
    smtpSubmissionTlsCertFile: files.cert,
    smtpSubmissionTlsKeyFile: files.key,
  };
  const mismatch = await startSmtpEdge({ ...ctx.deps, log: silent }, config).then(
    () => 'started',
    (error: Error) => error.message,
  );
  assert.match(mismatch, /^SMTP_SUBMISSION_TLS_KEY: the key does not fit the certificate in SMTP_SUBMISSION_TLS_CERT/);

  writeFileSync(files.key, first.key);
  const configured = await startSmtpEdge({ ...ctx.deps, log: silent }, config);
  const servedName = async () => {
    const client = await openSmtp(config.smtpSubmissionTlsPort, { implicitTls: true });
    const name = client.peerCertificate()?.subject.CN;
    client.close();
    return name;
  };
  try {
    assert.is(await servedName(), 'smtp.first.test');
    writeFileSync(files.cert, second.cert);
    writeFileSync(files.key, second.key);
    process.emit('SIGHUP', 'SIGHUP');
    assert.is(await servedName(), 'smtp.second.test');
  } finally {
    await configured.close();
  }
});

test.run();
