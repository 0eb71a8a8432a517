// The daily TLS-RPT job (RFC 8460 §4–5) on a controlled day: counts the MTA loop's statement wrote
// today become, once the day is over, one report per policy domain. It is POSTed gzipped to an https
// rua (a server under the test CA on 127.0.0.74:443) and checked against RFC 8460's JSON schema, and
// mailed to the mailto rua through the system mail path to an SMTP sink: multipart/report with §5.3's
// headers, the same report attached, DKIM-signed by the platform's verified domain and verified by
// dkimpy. Two workers running at once send each report once; a day past the retention is dropped.
import { createServer, type Server } from 'node:https';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant, type AdminFixture } from './helpers/fixtures.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { runJobs, workerContext } from './helpers/send-jobs.ts';
import { createTestCa, type TestCa } from './helpers/test-ca.ts';
import { dkimPython, dkimVerify } from './helpers/dkim-verify.ts';
import { validateTlsReport } from './helpers/tlsrpt-schema.ts';
import { recordTlsCountsStatement } from '../daemon/mta/sql/tls-report.ts';
import { sendTlsReports } from '../daemon/mta/tls-report-job.ts';
import type { TlsSession } from '../daemon/mta/tls-report.ts';
import type { AppliedPolicy } from '../daemon/mta/tls-policy.ts';

const SENDER_DOMAIN = 'reports.example.com';
const RUA_ADDRESS = '127.0.0.74';
let ctx: TestContext;
let dns: TestDnsServer;
let sink: SmtpSink;
let ca: TestCa;
let rua: Server;
let python: string;
let platformAdmin: AdminFixture;
const posted: { type: string | undefined; path: string | undefined; body: Buffer }[] = [];

const STS: AppliedPolicy = {
  type: 'sts',
  domain: 'report.test',
  strings: ['version: STSv1', 'mode: enforce', 'mx: mx1.report.test', 'mx: *.report.test', 'max_age: 86400'],
  lookupFailure: null,
};

test.before(async () => {
  python = dkimPython();
  dns = await startDnsServer();
  sink = await startSmtpSink();
  ca = createTestCa();
  const pair = ca.issue('rua', ['rua.report.test', 'rua.down.test']);
  rua = createServer({ cert: readFileSync(pair.cert), key: readFileSync(pair.key) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      posted.push({ type: req.headers['content-type'], path: req.url, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => rua.listen(443, RUA_ADDRESS, resolve));
  dns.zone.a.set('rua.report.test', [RUA_ADDRESS]);
  dns.zone.txt.set('_smtp._tls.report.test', [
    'v=TLSRPTv1; rua=https://rua.report.test/v1/tlsrpt,mailto:tls-reports@report.test',
  ]);
  dns.zone.txt.set('_spf.svc.example.com', ['v=spf1 ip4:127.0.0.1 -all']);
  ctx = await createTestContext({
    env: { SMTP_URL: `smtp://127.0.0.1:${sink.port}`, DNS_SERVERS: dns.address, PUBLIC_URL: 'https://svc.example.com' },
  });
  // The platform's own sender, verified with the ordinary /domains flow, so system mail is signed.
  platformAdmin = await createAdmin(ctx.app, { platformAdmin: true, email: 'ops@example.com' });
  const tenantId = await createTenant(platformAdmin.id, 'Platform');
  const headers = { authorization: `Bearer ${platformAdmin.token}`, 'x-tenant-id': tenantId };
  const patched = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers,
    payload: { defaultFromAddress: `no-reply@${SENDER_DOMAIN}` },
  });
  assert.is(patched.statusCode, 200, patched.body);
  const created = await ctx.app.inject({ method: 'POST', url: '/domains', headers, payload: { name: SENDER_DOMAIN } });
  assert.is(created.statusCode, 201, created.body);
  publishRecords(dns.zone, created.json().records);
  const verified = await ctx.app.inject({ method: 'POST', url: `/domains/${created.json().id}/verify`, headers });
  assert.is(verified.json().status, 'verified', verified.body);
});

test.after(async () => {
  await ctx?.close();
  await sink?.close();
  await new Promise((resolve) => (rua ? rua.close(resolve) : resolve(undefined)));
  await dns?.close();
});

/** Runs the MTA loop's count statement for `sessions`, as its batch commit does (today's UTC day). */
async function count(sessions: TlsSession[]): Promise<void> {
  const statement = recordTlsCountsStatement(sessions);
  assert.ok(statement);
  await ctx.db.sql.pool.query(statement.statement.text, statement.values);
}

const session = (policy: AppliedPolicy, host: string, failure: string | null, receivingIp?: string): TlsSession => ({
  policy,
  host,
  failure,
  sendingIp: '127.0.0.9',
  ...(receivingIp ? { receivingIp } : {}),
});

const today = new Date().toISOString().slice(0, 10);
const tomorrow = new Date(Date.now() + 86_400_000);
const run = (workerId: string, now: Date) =>
  sendTlsReports({ ...workerContext(ctx), workerId }, { now, ca: [ca.certPem] });

test('counts are summed per key across batches; an unfinished day is not reported', async () => {
  await count([
    session(STS, 'mx1.report.test', null, '127.0.0.71'),
    session(STS, 'mx1.report.test', null, '127.0.0.71'),
    session(STS, 'mx2.report.test', 'certificate-host-mismatch', '127.0.0.72'),
  ]);
  await count([
    session(STS, 'mx1.report.test', null, '127.0.0.71'),
    session(STS, 'mx2.report.test', 'certificate-host-mismatch', '127.0.0.72'),
    session(STS, 'mx3.report.test', 'starttls-not-supported'),
    session({ type: 'no-policy-found', domain: 'norua.test', strings: [], lookupFailure: null }, 'mx.norua.test', null),
  ]);
  const rows = await ctx.db.sequelize.query<{ result_type: string; mx_host: string; sessions: string }>(
    `SELECT result_type, mx_host, sessions::text FROM tls_report_counts WHERE policy_domain = 'report.test'
      ORDER BY mx_host`,
    { type: QueryTypes.SELECT },
  );
  assert.equal(rows, [
    { result_type: '', mx_host: 'mx1.report.test', sessions: '3' },
    { result_type: 'certificate-host-mismatch', mx_host: 'mx2.report.test', sessions: '2' },
    { result_type: 'starttls-not-supported', mx_host: 'mx3.report.test', sessions: '1' },
  ]);
  assert.equal(await run('daemon-a', new Date()), [], 'today is not over');
  assert.is(posted.length, 0);
});

test('the finished day: one report per domain from one of two workers, POSTed and valid against RFC 8460', async () => {
  const [a, b] = await Promise.all([run('daemon-a', tomorrow), run('daemon-b', tomorrow)]);
  const sent = [...a, ...b];
  assert.equal(sent.map((s) => s.domain).sort(), ['norua.test', 'report.test'], 'each domain once');
  assert.equal(sent.find((s) => s.domain === 'norua.test')?.outcomes, [], 'no _smtp._tls: nothing to send');
  assert.is(posted.length, 1, 'one POST');
  assert.is(posted[0].type, 'application/tlsrpt+gzip');
  assert.is(posted[0].path, '/v1/tlsrpt');
  const report = JSON.parse(gunzipSync(posted[0].body).toString());
  assert.equal(validateTlsReport(report), []);
  assert.is(report['organization-name'], 'svc.example.com');
  assert.is(report['contact-info'], `mailto:no-reply@${SENDER_DOMAIN}`);
  assert.equal(report['date-range'], {
    'start-datetime': `${today}T00:00:00.000Z`,
    'end-datetime': `${today}T23:59:59.000Z`,
  });
  assert.ok(report['report-id'].includes('report.test'));
  assert.equal(report.policies, [
    {
      policy: {
        'policy-type': 'sts',
        'policy-string': STS.strings,
        'policy-domain': 'report.test',
        'mx-host': ['mx1.report.test', '*.report.test'],
      },
      summary: { 'total-successful-session-count': 3, 'total-failure-session-count': 3 },
      'failure-details': [
        {
          'result-type': 'certificate-host-mismatch',
          'sending-mta-ip': '127.0.0.9',
          'receiving-mx-hostname': 'mx2.report.test',
          'receiving-ip': '127.0.0.72',
          'failed-session-count': 2,
        },
        {
          'result-type': 'starttls-not-supported',
          'sending-mta-ip': '127.0.0.9',
          'receiving-mx-hostname': 'mx3.report.test',
          'failed-session-count': 1,
        },
      ],
    },
  ]);
  const marks = await ctx.db.sequelize.query<{ policy_domain: string; report_id: string; finished: boolean }>(
    `SELECT policy_domain, report_id, finished_at IS NOT NULL AS finished FROM tls_report_sends ORDER BY 1`,
    { type: QueryTypes.SELECT },
  );
  assert.equal(
    marks.map((m) => [m.policy_domain, m.finished]),
    [
      ['norua.test', true],
      ['report.test', true],
    ],
  );
  assert.is(marks[1].report_id, report['report-id']);

  // The mailto rua: one system mail, delivered by the system worker (signed there).
  assert.equal(await runJobs(ctx, 'system'), ['done']);
  const received = await sink.waitFor((m) => m.rcptTo.includes('tls-reports@report.test'));
  const mail = received.parsed;
  assert.is(mail.headers.get('tls-report-domain'), 'report.test');
  assert.is(mail.headers.get('tls-report-submitter'), 'svc.example.com');
  assert.is(mail.subject, `Report Domain: report.test Submitter: svc.example.com Report-ID: <${report['report-id']}>`);
  assert.equal(
    mail.from?.value.map((v) => v.address),
    [`no-reply@${SENDER_DOMAIN}`],
  );
  assert.match(received.raw, /^Content-Type: multipart\/report; report-type="?tlsrpt"?;\s*boundary=/im);
  assert.is(mail.attachments.length, 1);
  assert.is(mail.attachments[0].contentType, 'application/tlsrpt+gzip');
  assert.match(mail.attachments[0].filename ?? '', /^svc\.example\.com!report\.test!\d+!\d+\.json\.gz$/);
  assert.equal(JSON.parse(gunzipSync(mail.attachments[0].content).toString()), report, 'the same report');
  const signature = /^DKIM-Signature:([^]*?)\r?\n(?=\S)/m.exec(received.raw)?.[1] ?? '';
  assert.match(signature, new RegExp(`d=${SENDER_DOMAIN.replace(/\./g, '\\.')};`));
  assert.match(signature.replace(/\s+/g, ''), /h=[^;]*tls-report-domain:tls-report-submitter/i);
  assert.is(await dkimVerify(python, dns.address, received.raw), 'pass');
  // The signature covers §5.3's headers: a changed TLS-Report-Domain fails.
  assert.match(received.raw, /^TLS-Report-Domain: report\.test$/im);
  assert.is(
    await dkimVerify(
      python,
      dns.address,
      received.raw.replace(/^(TLS-Report-Domain:) report\.test/im, '$1 other.test'),
    ),
    'fail',
  );
});

test('run again: nothing is sent twice', async () => {
  assert.equal(await run('daemon-a', tomorrow), []);
  assert.equal(await run('daemon-b', tomorrow), []);
  assert.is(posted.length, 1);
  assert.equal(await runJobs(ctx, 'system'), []);
});

test('an https rua that refuses is tried again on a later run, and counts past the retention are dropped', async () => {
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  await ctx.db.sequelize.query(
    `INSERT INTO tls_report_counts (day, policy_domain, policy_type, policy_hash, policy_strings, mx_host, sessions)
     VALUES (:yesterday, 'down.test', 'no-policy-found', md5('[]'), '[]', 'mx.down.test', 4),
            (current_date - 30, 'old.test', 'no-policy-found', md5('[]'), '[]', 'mx.old.test', 1)`,
    { replacements: { yesterday } },
  );
  dns.zone.txt.set('_smtp._tls.down.test', ['v=TLSRPTv1; rua=https://rua.down.test/x']);
  // Nothing listens there: the POST fails, the report is left for a later run.
  dns.zone.a.set('rua.down.test', ['127.0.0.75']);
  assert.equal(await run('daemon-a', new Date()), []);
  const left = await ctx.db.sequelize.query<{ policy_domain: string; finished: boolean }>(
    `SELECT policy_domain, finished_at IS NOT NULL AS finished FROM tls_report_sends WHERE policy_domain = 'down.test'`,
    { type: QueryTypes.SELECT },
  );
  assert.equal(left, [{ policy_domain: 'down.test', finished: false }], 'claimed, not finished');
  const old = await ctx.db.sequelize.query(`SELECT 1 FROM tls_report_counts WHERE policy_domain = 'old.test'`, {
    type: QueryTypes.SELECT,
  });
  assert.is(old.length, 0, 'past the retention');
  // Its lease ended (as after the lease time): the next run POSTs to the rua, which now answers.
  await ctx.db.sequelize.query(`UPDATE tls_report_sends SET claimed_until = now() - interval '1 second'`);
  dns.zone.a.set('rua.down.test', [RUA_ADDRESS]);
  const [retried] = await run('daemon-b', new Date());
  assert.is(retried?.domain, 'down.test');
  assert.equal(retried.outcomes, [{ uri: 'https://rua.down.test/x', ok: true, detail: 'HTTP 200', tries: 2 }]);
  assert.is(posted.length, 2);
  const report = JSON.parse(gunzipSync(posted[1].body).toString());
  assert.equal(validateTlsReport(report), []);
  assert.equal(report.policies[0].summary, { 'total-successful-session-count': 4, 'total-failure-session-count': 0 });
});

test('one of two https ruas refuses: the other and the mailto get it once; the refusing one alone is tried again with the same report id', async () => {
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  await ctx.db.sequelize.query(
    `INSERT INTO tls_report_counts (day, policy_domain, policy_type, policy_hash, policy_strings, mx_host, sessions)
     VALUES (:yesterday, 'half.test', 'no-policy-found', md5('[]'), '[]', 'mx.half.test', 7)`,
    { replacements: { yesterday } },
  );
  dns.zone.txt.set('_smtp._tls.half.test', [
    'v=TLSRPTv1; rua=https://rua.report.test/half,https://rua.down.test/half,mailto:tls-half@report.test',
  ]);
  dns.zone.a.set('rua.down.test', ['127.0.0.75']); // nothing listens
  const postedBefore = posted.length;
  assert.equal(await run('daemon-a', new Date()), [], 'not finished: one rua has tries left');
  assert.equal(
    posted.slice(postedBefore).map((p) => p.path),
    ['/half'],
  );
  const firstId = JSON.parse(gunzipSync(posted[postedBefore].body).toString())['report-id'];
  assert.equal(await runJobs(ctx, 'system'), ['done'], 'the mailto rua: one system mail');
  const [progress] = await ctx.db.sequelize.query<{
    report_id: string;
    outcome: Array<{ uri: string; ok: boolean; tries: number }>;
  }>(`SELECT report_id, outcome FROM tls_report_sends WHERE policy_domain = 'half.test' AND finished_at IS NULL`, {
    type: QueryTypes.SELECT,
  });
  assert.is(progress.report_id, firstId);
  assert.equal(
    progress.outcome.map((o) => [o.uri, o.ok, o.tries]),
    [
      ['https://rua.report.test/half', true, 1],
      ['https://rua.down.test/half', false, 1],
      ['mailto:tls-half@report.test', true, 1],
    ],
  );

  await ctx.db.sequelize.query(`UPDATE tls_report_sends SET claimed_until = now() - interval '1 second'`);
  dns.zone.a.set('rua.down.test', [RUA_ADDRESS]);
  const [finished] = await run('daemon-b', new Date());
  assert.is(finished?.domain, 'half.test');
  assert.equal(
    posted.slice(postedBefore + 1).map((p) => p.path),
    ['/half'],
    'only the rua that refused',
  );
  assert.is(JSON.parse(gunzipSync(posted[postedBefore + 1].body).toString())['report-id'], firstId, 'the same report');
  assert.equal(await runJobs(ctx, 'system'), [], 'the mailto rua is not mailed again');
  assert.equal(
    finished.outcomes.map((o) => [o.uri, o.ok, o.tries]),
    [
      ['https://rua.report.test/half', true, 1],
      ['mailto:tls-half@report.test', true, 1],
      ['https://rua.down.test/half', true, 2],
    ],
  );
});

test('an https rua that refuses on its tenth try is given up: the report is finished with the failure kept', async () => {
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  await ctx.db.sequelize.query(
    `INSERT INTO tls_report_counts (day, policy_domain, policy_type, policy_hash, policy_strings, mx_host, sessions)
     VALUES (:yesterday, 'gone.test', 'no-policy-found', md5('[]'), '[]', 'mx.gone.test', 2);
     INSERT INTO tls_report_sends (day, policy_domain, claimed_by, claimed_until, report_id, outcome)
     VALUES (:yesterday, 'gone.test', 'daemon-a', now() - interval '1 second', 'gone-report-1',
             '[{"uri": "https://rua.gone.test/x", "ok": false, "detail": "connect ECONNREFUSED", "tries": 9}]')`,
    { replacements: { yesterday } },
  );
  dns.zone.txt.set('_smtp._tls.gone.test', ['v=TLSRPTv1; rua=https://rua.gone.test/x']);
  dns.zone.a.set('rua.gone.test', ['127.0.0.75']); // nothing listens
  const [given] = await run('daemon-b', new Date());
  assert.is(given?.domain, 'gone.test');
  assert.is(given.report['report-id'], 'gone-report-1');
  assert.equal(
    given.outcomes.map((o) => [o.uri, o.ok, o.tries]),
    [['https://rua.gone.test/x', false, 10]],
  );
  const [row] = await ctx.db.sequelize.query<{ finished: boolean }>(
    `SELECT finished_at IS NOT NULL AS finished FROM tls_report_sends WHERE policy_domain = 'gone.test'`,
    { type: QueryTypes.SELECT },
  );
  assert.ok(row.finished);
});

test.run();
