// TLS reports an operator can drive (issue 49 §6): reports went out only from the daily job, signed
// `localhost` when PUBLIC_URL is an address. Now platform admins preview a day's report for a domain
// (GET /platform/tls-reports/:domain/:day, `svc tls-reports show`) and send it again (POST …/send,
// `svc tls-reports send`), and the report says who sent it from the platform settings.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { createAdmin, type AdminFixture } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { assertErrorBody } from './helpers/error-body.ts';

let ctx: TestContext;
let dns: TestDnsServer;
let admin: AdminFixture;
let cli: InProcessCli;
const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
const today = new Date().toISOString().slice(0, 10);
const STS = ['version: STSv1', 'mode: enforce', 'mx: mx.x.test', 'max_age: 86400'];

test.before(async () => {
  dns = await startDnsServer();
  ctx = await createTestContext({ env: { DNS_SERVERS: dns.address, PUBLIC_URL: 'http://127.0.0.1:3000' } });
  admin = await createAdmin(ctx.app, { platformAdmin: true });
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  cli.writeProfile({ accessToken: admin.token, refreshToken: 'unused' });
  await ctx.db.sequelize.query(
    `INSERT INTO tls_report_counts
       (day, policy_domain, policy_type, policy_hash, policy_strings, mx_host, sending_ip, receiving_ip, result_type, sessions)
     VALUES (:yesterday, 'x.test', 'sts', md5(:sts), CAST(:sts AS jsonb), 'mx.x.test', '127.0.0.1', '127.0.0.5', '', 3),
            (:yesterday, 'x.test', 'sts', md5(:sts), CAST(:sts AS jsonb), 'mx.x.test', '127.0.0.1', '127.0.0.5', 'certificate-expired', 1),
            (:yesterday, 'quiet.test', 'no-policy-found', md5('[]'), '[]', 'mx.quiet.test', '', '', '', 2),
            (:today, 'x.test', 'no-policy-found', md5('[]'), '[]', 'mx.x.test', '', '', '', 1)`,
    { replacements: { yesterday, today, sts: JSON.stringify(STS) } },
  );
  dns.zone.txt.set('_smtp._tls.x.test', ['v=TLSRPTv1; rua=mailto:tls@x.test']);
});

test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
  await dns?.close();
});

const as = (token: string) => ({ authorization: `Bearer ${token}` });

test('organization-name and contact-info come from the platform settings', async () => {
  const set = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: as(admin.token),
    payload: { tlsReportOrganization: 'Acme Mail Ltd', tlsReportContact: 'mailto:postmaster@acme.test' },
  });
  assert.is(set.statusCode, 200, set.body);
  const bad = await ctx.app.inject({
    method: 'PATCH',
    url: '/platform/settings',
    headers: as(admin.token),
    payload: { tlsReportContact: 'postmaster at acme' },
  });
  assertErrorBody(bad, 400, 'VALIDATION_FAILED');
});

test("svc tls-reports show: the day's report as sent, its rua, not sent yet", async () => {
  const run = await cli.run(['tls-reports', 'show', 'X.test', '--day', yesterday, '--json']);
  assert.is(run.code, 0, run.stdout + run.stderr);
  const preview = run.json;
  assert.is(preview.domain, 'x.test');
  assert.is(preview.report['organization-name'], 'Acme Mail Ltd');
  assert.is(preview.report['contact-info'], 'mailto:postmaster@acme.test');
  assert.equal(preview.report['date-range'], {
    'start-datetime': `${yesterday}T00:00:00.000Z`,
    'end-datetime': `${yesterday}T23:59:59.000Z`,
  });
  assert.is(preview.report.policies.length, 1);
  const [policy] = preview.report.policies;
  assert.equal(policy.policy['policy-string'], STS);
  assert.equal(policy.summary, { 'total-successful-session-count': 3, 'total-failure-session-count': 1 });
  assert.is(policy['failure-details'][0]['result-type'], 'certificate-expired');
  assert.equal(preview.rua, { https: [], mailto: ['tls@x.test'], answered: true });
  assert.is(preview.sent, null);

  const human = await cli.run(['tls-reports', 'show', 'x.test', '--day', yesterday]);
  assert.is(human.code, 0, human.stderr);
  assert.match(human.stdout, /from Acme Mail Ltd \(mailto:postmaster@acme\.test\)/);
  assert.match(human.stdout, /sts: 3 successful, 1 failed session\(s\)/);
  assert.match(human.stdout, /certificate-expired ×1 at mx\.x\.test/);
  assert.match(human.stdout, /rua: mailto:tls@x\.test/);
  assert.match(human.stdout, /not sent yet/);
});

test('svc tls-reports send: to every rua, recorded, the daily job leaves the day alone, audited', async () => {
  const run = await cli.run(['tls-reports', 'send', 'x.test', '--day', yesterday, '--json']);
  assert.is(run.code, 0, run.stdout + run.stderr);
  assert.is(run.json.outcomes.length, 1);
  assert.is(run.json.outcomes[0].uri, 'mailto:tls@x.test');
  assert.is(run.json.outcomes[0].ok, true);
  const jobId = /system mail job (\S+)/.exec(run.json.outcomes[0].detail)![1];
  const [job] = await ctx.db.sequelize.query<{ queue: string }>(`SELECT queue FROM jobs WHERE id = :jobId`, {
    replacements: { jobId },
    type: QueryTypes.SELECT,
  });
  assert.is(job.queue, 'system', 'the report mail is a system mail job');
  const [mark] = await ctx.db.sequelize.query<{ report_id: string; finished: boolean }>(
    `SELECT report_id, finished_at IS NOT NULL AS finished FROM tls_report_sends WHERE policy_domain = 'x.test' AND day = :yesterday`,
    { replacements: { yesterday }, type: QueryTypes.SELECT },
  );
  assert.equal(mark, { report_id: run.json.reportId, finished: true });
  const [audit] = await ctx.db.sequelize.query<{ target: string }>(
    `SELECT target FROM audit_events WHERE action = 'platform.tls_report_sent' AND admin_id = :id`,
    { replacements: { id: admin.id }, type: QueryTypes.SELECT },
  );
  assert.is(audit.target, `x.test ${yesterday}`);

  // The preview now shows what went, under the same report id; a second send keeps it.
  const preview = await cli.run(['tls-reports', 'show', 'x.test', '--day', yesterday, '--json']);
  assert.is(preview.json.report['report-id'], run.json.reportId);
  assert.is(preview.json.sent.outcomes[0].uri, 'mailto:tls@x.test');
  const again = await cli.run(['tls-reports', 'send', 'x.test', '--day', yesterday, '--json']);
  assert.is(again.json.reportId, run.json.reportId);
  const human = await cli.run(['tls-reports', 'send', 'x.test', '--day', yesterday]);
  assert.match(human.stdout, new RegExp(`Sent the report of x\\.test for ${yesterday}`));
  assert.match(human.stdout, /✓ mailto:tls@x\.test\s+system mail job/);
});

test('refusals: a day not over, no counts, no rua, not a day, not a platform admin', async () => {
  const post = (domain: string, day: string, token = admin.token) =>
    ctx.app.inject({ method: 'POST', url: `/platform/tls-reports/${domain}/${day}/send`, headers: as(token) });
  const notOver = assertErrorBody(await post('x.test', today), 409, 'DAY_NOT_OVER');
  assert.match(notOver.message, /is not over yet/);
  const none = assertErrorBody(await post('nothing.test', yesterday), 404, 'NOT_FOUND');
  assert.match(none.message, /No TLS report for nothing\.test/);
  const norua = assertErrorBody(await post('quiet.test', yesterday), 409, 'NO_TLS_RPT_RECORD');
  assert.match(norua.message, /publishes no TLS-RPT record/);
  assertErrorBody(await post('x.test', '2026-02-30'), 400, 'VALIDATION_FAILED');
  assertErrorBody(
    await ctx.app.inject({ method: 'GET', url: `/platform/tls-reports/x.test/yesterday`, headers: as(admin.token) }),
    400,
    'VALIDATION_FAILED',
  );
  const owner = await createAdmin(ctx.app);
  assertErrorBody(await post('x.test', yesterday, owner.token), 403, 'PLATFORM_ADMIN_REQUIRED');
  const cliRun = await cli.run(['tls-reports', 'send', 'x.test', '--day', today]);
  assert.is.not(cliRun.code, 0);
  assert.match(cliRun.stderr + cliRun.stdout, /is not over yet/);
});

test.run();
