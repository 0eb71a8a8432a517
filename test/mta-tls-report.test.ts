// TLS-RPT (RFC 8460): sessions counted per policy into the aggregate report, checked against the
// report's JSON schema as RFC 8460 §4.4 defines its fields; the rua addresses read from `_smtp._tls`;
// the gzipped report POSTed to an https rua under the test CA; the mail form parsed back.
import { createServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { simpleParser } from 'mailparser';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { createTestCa, type TestCa } from './helpers/test-ca.ts';
import { freeLoopbackAddress } from './helpers/mx-host.ts';
import { createDnsClient } from '../daemon/mta/dns-query.ts';
import {
  composeReportMail,
  gzipReport,
  postReport,
  reportingAddresses,
  TlsReportCollector,
} from '../daemon/mta/tls-report.ts';
import type { AppliedPolicy } from '../daemon/mta/tls-policy.ts';
import { validateTlsReport } from './helpers/tlsrpt-schema.ts';

let dns: TestDnsServer;
let ca: TestCa;

test.before(async () => {
  dns = await startDnsServer();
  ca = createTestCa();
});

test.after(async () => {
  await dns.close();
});

const sts: AppliedPolicy = {
  type: 'sts',
  domain: 'sts.test',
  strings: ['version: STSv1', 'mode: enforce', 'mx: mx1.sts.test', 'mx: *.sts.test', 'max_age: 86400'],
  lookupFailure: null,
};
const none: AppliedPolicy = { type: 'no-policy-found', domain: 'plain.test', strings: [], lookupFailure: null };

function collected() {
  const collector = new TlsReportCollector();
  for (let i = 0; i < 5; i++) collector.record(sts, { host: 'mx1.sts.test', failure: null });
  collector.record(
    sts,
    { host: 'mx2.sts.test', failure: 'certificate-expired' },
    { sendingIp: '127.0.0.9', receivingIp: '127.0.0.20' },
  );
  collector.record(
    sts,
    { host: 'mx2.sts.test', failure: 'certificate-expired' },
    { sendingIp: '127.0.0.9', receivingIp: '127.0.0.20' },
  );
  collector.record(sts, { host: 'mx3.sts.test', failure: 'starttls-not-supported' });
  collector.record(none, { host: 'mx.plain.test', failure: null });
  return collector.drain(
    { start: new Date('2026-11-24T00:00:00Z'), end: new Date('2026-11-24T23:59:59Z') },
    { organizationName: 'svc test', contactInfo: 'mailto:tlsrpt@svc.test' },
  );
}

test('the aggregate: counts per policy, failure details per result and host, valid against RFC 8460 §4.4', () => {
  const reports = collected();
  assert.equal(reports.map((r) => r.domain).sort(), ['plain.test', 'sts.test']);
  const { report } = reports.find((r) => r.domain === 'sts.test')!;
  for (const { report: each } of reports) assert.equal(validateTlsReport(each), []);
  assert.equal(report.policies, [
    {
      policy: {
        'policy-type': 'sts',
        'policy-string': sts.strings,
        'policy-domain': 'sts.test',
        'mx-host': ['mx1.sts.test', '*.sts.test'],
      },
      summary: { 'total-successful-session-count': 5, 'total-failure-session-count': 3 },
      'failure-details': [
        {
          'result-type': 'certificate-expired',
          'sending-mta-ip': '127.0.0.9',
          'receiving-mx-hostname': 'mx2.sts.test',
          'receiving-ip': '127.0.0.20',
          'failed-session-count': 2,
        },
        { 'result-type': 'starttls-not-supported', 'receiving-mx-hostname': 'mx3.sts.test', 'failed-session-count': 1 },
      ],
    },
  ]);
  assert.equal(report['date-range'], {
    'start-datetime': '2026-11-24T00:00:00.000Z',
    'end-datetime': '2026-11-24T23:59:59.000Z',
  });
  const lookupFailed = new TlsReportCollector();
  lookupFailed.record(
    { ...sts, strings: [], lookupFailure: 'sts-policy-fetch-error' },
    { host: 'mx1.sts.test', failure: null },
  );
  const [failedReport] = lookupFailed.drain(
    { start: new Date(), end: new Date() },
    { organizationName: 'o', contactInfo: 'c' },
  );
  assert.equal(failedReport.report.policies[0]['failure-details']?.[0]['result-type'], 'sts-policy-fetch-error');
  assert.equal(validateTlsReport(failedReport.report), []);
});

test('rua addresses from _smtp._tls; the report POSTed gzipped to the https one', async () => {
  const receiverAddress = await freeLoopbackAddress();
  dns.zone.txt.set('_smtp._tls.sts.test', [
    `v=TLSRPTv1; rua=mailto:tls%2Breports@sts.test,https://rua.sts.test/tlsrpt`,
  ]);
  dns.zone.txt.set('_smtp._tls.twice.test', [
    'v=TLSRPTv1; rua=mailto:a@twice.test',
    'v=TLSRPTv1; rua=mailto:b@twice.test',
  ]);
  const client = createDnsClient({ servers: [dns.address] });
  const addresses = await reportingAddresses(client, 'sts.test');
  assert.equal(addresses, { https: ['https://rua.sts.test/tlsrpt'], mailto: ['tls+reports@sts.test'] });
  assert.equal(await reportingAddresses(client, 'twice.test'), { https: [], mailto: [] }, 'two records: none');
  assert.equal(await reportingAddresses(client, 'plain.test'), { https: [], mailto: [] });

  const pair = ca.issue('rua', ['rua.sts.test']);
  const received: { type: string | undefined; body: Buffer }[] = [];
  const server = createServer({ cert: readFileSync(pair.cert), key: readFileSync(pair.key) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ type: req.headers['content-type'], body: Buffer.concat(chunks) });
      res.writeHead(201).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(443, receiverAddress, resolve));
  try {
    dns.zone.a.set('rua.sts.test', [receiverAddress]);
    const [{ report }] = collected().filter((r) => r.domain === 'sts.test');
    const result = await postReport(`https://rua.sts.test/tlsrpt`, gzipReport(report), {
      ca: [ca.certPem],
      dns: client,
    });
    assert.equal([result.ok, result.status], [true, 201]);
    assert.is(received.length, 1);
    assert.is(received[0].type, 'application/tlsrpt+gzip');
    assert.equal(JSON.parse(gunzipSync(received[0].body).toString()), report);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

test('the mail form: multipart/report; report-type="tlsrpt", the headers of §5.3, the gzipped JSON attached', async () => {
  const [{ report, domain }] = collected().filter((r) => r.domain === 'sts.test');
  const raw = await composeReportMail({
    report,
    domain,
    from: 'tlsrpt@svc.test',
    to: ['tls+reports@sts.test'],
    submitter: 'svc.test',
  });
  const parsed = await simpleParser(raw);
  assert.match(raw.toString(), /Content-Type: multipart\/report; report-type="?tlsrpt"?;\s*boundary=/i);
  assert.is(parsed.headers.get('tls-report-domain'), 'sts.test');
  assert.is(parsed.headers.get('tls-report-submitter'), 'svc.test');
  assert.is(parsed.subject, `Report Domain: sts.test Submitter: svc.test Report-ID: <${report['report-id']}>`);
  assert.is(parsed.attachments.length, 1);
  const [attachment] = parsed.attachments;
  assert.is(attachment.contentType, 'application/tlsrpt+gzip');
  assert.match(attachment.filename ?? '', /^svc\.test!sts\.test!\d+!\d+\.json\.gz$/);
  assert.equal(JSON.parse(gunzipSync(attachment.content).toString()), report);
});

test.run();
