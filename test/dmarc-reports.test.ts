// DMARC aggregate reports (RFC 7489 appendix C) delivered by swaks to the rua address the service
// tells tenants to publish — as plain XML, gzip (Microsoft's way) and zip (Google's), fixtures written
// by Python's gzip and zipfile — stored per domain, answered by GET /domains/{id}/dmarc-reports and
// shown by `svc domains dmarc` against the listening daemon.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createApiKey, createWorld } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { freePort, swaks } from './helpers/swaks.ts';
import { startInboundServer } from '../daemon/smtp/inbound.ts';
import { killAllDaemons, seedSendWorld, startChildDaemon, stopChildDaemon } from './helpers/send-daemon.ts';

let ctx: TestContext;
let inbound: { port: number; stop(): Promise<void> };
let world: Awaited<ReturnType<typeof createWorld>>;
let domainId: string;
let cli: InProcessCli;
let matchers: ReturnType<typeof operationMatchers>;
const logLines: Array<{ details: Record<string, unknown>; message: string }> = [];

const RUA = 'dmarc-reports@mail.example.test';
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/dmarc/${name}`, import.meta.url));
const PLAIN = fixture('google.com!acme.test!1335571200!1335657599.xml');
const GZIP = fixture('enterprise.protection.outlook.com!acme.test!1335657600!1335743999.xml.gz');
const ZIP = fixture('google.com!acme.test!1335571200!1335657599.zip');
const FOREIGN = fixture('yahoo.com!nobody-has-this.example!1335571200!1335657599.xml');

test.before(async () => {
  const port = await freePort();
  ctx = await createTestContext({ env: { PUBLIC_URL: 'http://mail.example.test', SMTP_INBOUND_PORT: String(port) } });
  world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId);
  const [row] = await ctx.db.sequelize.query<{ id: string }>(`SELECT id FROM domains WHERE tenant_id = :tenantId`, {
    replacements: { tenantId: world.tenantId },
    type: QueryTypes.SELECT,
  });
  domainId = row.id;
  const log = {
    info: (details: object, message: string) => logLines.push({ details: details as Record<string, unknown>, message }),
    warn: (details: object, message: string) => logLines.push({ details: details as Record<string, unknown>, message }),
  };
  inbound = (await startInboundServer({ config: ctx.config, db: ctx.db, secrets: ctx.deps.secrets, log }))!;
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  matchers = operationMatchers(document);
  cli = new InProcessCli(await listen(ctx), matchers);
});
test.after(async () => {
  killAllDaemons();
  cli?.cleanup();
  await inbound?.stop();
  await ctx?.close();
});

/** As a reporter sends it: a short text body and the report attached. */
function deliver(file: string, type: string) {
  return swaks(inbound.port, [
    '--from',
    'noreply-dmarc-support@google.com',
    '--to',
    RUA,
    '--header',
    'Subject: Report domain: acme.test Submitter: google.com',
    '--body',
    'DMARC aggregate report attached.',
    '--attach-type',
    type,
    '--attach',
    `@${file}`,
  ]);
}

const reportRows = () =>
  ctx.db.sequelize.query<{
    org_name: string;
    report_id: string;
    date_begin: Date;
    date_end: Date;
    policy: Record<string, string>;
  }>(
    `SELECT org_name, report_id, date_begin, date_end, policy FROM dmarc_reports WHERE domain_id = :domainId ORDER BY date_end, report_id`,
    { replacements: { domainId }, type: QueryTypes.SELECT },
  );

test("the DMARC record tenants are told to publish names the service's rua address", async () => {
  const res = await ctx.app.inject({ method: 'GET', url: `/domains/${domainId}/dns`, headers: world.asOwner });
  assert.is(res.statusCode, 200, res.body);
  const dmarc = res.json().records.find((r: { record: string }) => r.record === 'dmarc');
  assert.is(dmarc.name, '_dmarc.acme.test');
  assert.is(dmarc.value, `v=DMARC1; p=quarantine; rua=mailto:${RUA}`);
});

test('a plain XML report is stored with its metadata and one row per source', async () => {
  const run = await deliver(PLAIN, 'text/xml');
  assert.is(run.code, 0, run.output);
  assert.match(run.output, /250 Accepted: dmarc \(1\)/);
  const [report] = await reportRows();
  assert.is(report.org_name, 'google.com');
  assert.is(report.report_id, '9391651994964116463');
  assert.is(new Date(report.date_begin).toISOString(), '2012-04-28T00:00:00.000Z');
  assert.is(new Date(report.date_end).toISOString(), '2012-04-28T23:59:59.000Z');
  assert.equal(report.policy, { adkim: 'r', aspf: 'r', p: 'quarantine', sp: 'quarantine', pct: '100' });
  const records = await ctx.db.sequelize.query(
    `SELECT source_ip, message_count, disposition, dkim_aligned, spf_aligned, dkim_result, dkim_domain, spf_result, spf_domain
       FROM dmarc_report_records r JOIN dmarc_reports d ON d.id = r.report_id WHERE d.report_id = '9391651994964116463' ORDER BY message_count DESC`,
    { type: QueryTypes.SELECT },
  );
  assert.equal(records, [
    {
      source_ip: '203.0.113.7',
      message_count: 42,
      disposition: 'none',
      dkim_aligned: true,
      spf_aligned: true,
      dkim_result: 'pass',
      dkim_domain: 'acme.test',
      spf_result: 'pass',
      spf_domain: 'bounces.acme.test',
    },
    {
      source_ip: '198.51.100.99',
      message_count: 7,
      disposition: 'quarantine',
      dkim_aligned: false,
      spf_aligned: false,
      dkim_result: null,
      dkim_domain: null,
      spf_result: 'softfail',
      spf_domain: 'spoofer.example',
    },
    {
      source_ip: '72.150.241.94',
      message_count: 2,
      disposition: 'none',
      dkim_aligned: false,
      spf_aligned: true,
      dkim_result: 'fail',
      dkim_domain: 'acme.test',
      spf_result: 'pass',
      spf_domain: 'acme.test',
    },
  ]);
});

test('the same report sent again is stored once', async () => {
  const run = await deliver(PLAIN, 'text/xml');
  assert.is(run.code, 0, run.output);
  assert.match(run.output, /250 Accepted: dmarc\r?\n/);
  assert.is((await reportRows()).length, 1);
});

test('gzip and zip reports are read too', async () => {
  const gz = await deliver(GZIP, 'application/gzip');
  assert.is(gz.code, 0, gz.output);
  // Google labels its zips application/zip; what the bytes are decides, not the label.
  const zip = await deliver(ZIP, 'application/octet-stream');
  assert.is(zip.code, 0, zip.output);
  const rows = await reportRows();
  assert.equal(
    rows.map((r) => [r.org_name, r.report_id]),
    [
      ['google.com', '9391651994964116463'],
      ['google.com', '9391651994964116464'],
      ['Enterprise Outlook', 'c5c5f1ba6a8a4e1c9c1f0d1e2f3a4b5c'],
    ],
  );
  const [{ count }] = await ctx.db.sequelize.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM dmarc_report_records`,
    { type: QueryTypes.SELECT },
  );
  assert.is(count, 9);
});

test('a report for a domain no tenant has is accepted from the sender, dropped and logged', async () => {
  const run = await deliver(FOREIGN, 'text/xml');
  assert.is(run.code, 0, run.output);
  assert.match(run.output, /250 Accepted: dmarc\r?\n/);
  const [{ count }] = await ctx.db.sequelize.query<{ count: number }>(
    `SELECT count(*)::int AS count FROM dmarc_reports WHERE org_name = 'Yahoo'`,
    { type: QueryTypes.SELECT },
  );
  assert.is(count, 0);
  const line = logLines.find((l) => l.message === 'DMARC report dropped: no tenant has this domain');
  assert.ok(line);
  assert.is(line.details.domain, 'nobody-has-this.example');
});

test('GET /domains/{id}/dmarc-reports: newest first, sources with alignment, failing counts; tenant-scoped, domains:read', async () => {
  const reader = await createApiKey(world.tenantId, { scopes: ['domains:read'] });
  const res = await ctx.app.inject({
    method: 'GET',
    url: `/domains/${domainId}/dmarc-reports?limit=2`,
    headers: { authorization: `Bearer ${reader.key}` },
  });
  assert.is(res.statusCode, 200, res.body);
  const body = res.json();
  assert.equal(body.meta, { page: 1, limit: 2, total: 3, totalPages: 2 });
  assert.is(body.data[0].orgName, 'Enterprise Outlook');
  assert.is(body.data[0].dateEnd, '2012-04-29T23:59:59.000Z');
  const report = body.data[1];
  assert.is(report.messages, 51);
  assert.is(report.failing, 7);
  assert.equal(
    report.sources.map((s: { sourceIp: string; dmarc: string }) => [s.sourceIp, s.dmarc]),
    [
      ['203.0.113.7', 'pass'],
      ['198.51.100.99', 'fail'],
      ['72.150.241.94', 'pass'],
    ],
  );
  assert.equal(report.sources[2], {
    sourceIp: '72.150.241.94',
    count: 2,
    disposition: 'none',
    headerFrom: 'acme.test',
    dkim: { aligned: false, result: 'fail', domain: 'acme.test' },
    spf: { aligned: true, result: 'pass', domain: 'acme.test' },
    dmarc: 'pass',
  });
  // Another tenant sees no such domain.
  const stranger = await createWorld(ctx.app);
  const hidden = await ctx.app.inject({
    method: 'GET',
    url: `/domains/${domainId}/dmarc-reports`,
    headers: stranger.asKey,
  });
  assert.is(hidden.statusCode, 404, hidden.body);
  assert.is(hidden.json().code, 'NOT_FOUND');
});

test('svc domains dmarc <domain> shows the failing sources as a table, and the answer with --json', async () => {
  const env = { SVC_API_KEY: world.key.key };
  const json = await cli.run(['domains', 'dmarc', 'acme.test', '--json'], { env });
  assert.is(json.code, 0, json.stderr);
  assert.is(json.json.meta.total, 3);
  assert.is(json.json.data.length, 3);
  const text = await cli.run(['domains', 'dmarc', 'acme.test'], { env });
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, /REPORTER\s+PERIOD\s+SOURCE\s+COUNT\s+DMARC\s+DKIM\s+SPF\s+DISPOSITION/);
  assert.match(
    text.stdout,
    /google\.com\s+2012-04-28 → 2012-04-28\s+198\.51\.100\.99\s+7\s+FAIL\s+not aligned —\s+not aligned softfail spoofer\.example\s+quarantine/,
  );
  assert.match(text.stdout, /21 of 153 messages failed DMARC on this page\./);
});

test('svc daemon start with SMTP_INBOUND_PORT receives a zipped report by SMTP; svc domains dmarc shows it', async () => {
  const port = await freePort();
  const daemonWorld = await seedSendWorld({ SMTP_INBOUND_PORT: String(port) });
  const daemon = await startChildDaemon(daemonWorld);
  const daemonCli = new InProcessCli(daemon.url, matchers);
  try {
    assert.match(daemon.output(), /inbound SMTP listening/);
    // PUBLIC_URL is http://127.0.0.1:<port>: the mail domain of an IP address is localhost.
    const run = await swaks(port, [
      '--from',
      'noreply-dmarc-support@google.com',
      '--to',
      'dmarc-reports@localhost',
      '--attach-type',
      'application/zip',
      '--attach',
      `@${ZIP}`,
    ]);
    assert.is(run.code, 0, run.output);
    assert.match(run.output, /250 Accepted: dmarc \(1\)/);
    const answer = await daemonCli.run(['domains', 'dmarc', 'acme.test', '--json'], {
      env: { SVC_API_KEY: daemonWorld.apiKey },
    });
    assert.is(answer.code, 0, answer.stderr);
    assert.is(answer.json.data.length, 1);
    assert.is(answer.json.data[0].reportId, '9391651994964116464');
    assert.equal(
      answer.json.data[0].sources
        .filter((s: { dmarc: string }) => s.dmarc === 'fail')
        .map((s: { sourceIp: string }) => s.sourceIp),
      ['198.51.100.99'],
    );
  } finally {
    assert.is(await stopChildDaemon(daemon), 0);
    daemonCli.cleanup();
    await daemonWorld.database.drop();
  }
});

test.run();
