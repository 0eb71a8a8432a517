// TLS results counted for TLS-RPT by a running daemon (DELIVERY=direct), and routing over IPv6 and
// IPv4. The daemon trusts the test CA through NODE_EXTRA_CA_CERTS (node's extra roots, used for the
// MTA-STS policy fetch and the MX certificate check alike). MTA-STS policies are served over HTTPS on
// 127.0.0.70:443; MX hosts on 127.0.0.71 (a certificate for its name), 127.0.0.72 (a certificate for
// another name) and [::1]:25; 127.0.0.73 has nothing listening. enforce + good certificate: delivered,
// a success counted; enforce + wrong name: deferred, certificate-host-mismatch counted; testing + wrong
// name: delivered, the mismatch counted. An MX with only an AAAA record gets the mail over IPv6; an MX
// whose A address is down falls back to its AAAA one.
import { createServer } from 'node:https';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MxHost } from './helpers/mx-host.ts';
import { createTestCa, type TestCa } from './helpers/test-ca.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { openWorldDatabase, type SendWorld } from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';
import { QueryTypes } from 'sequelize';

const POLICY_ADDRESS = '127.0.0.70';
const GOOD_MX = '127.0.0.71';
const MISNAMED_MX = '127.0.0.72';
const DOWN_ADDRESS = '127.0.0.73';

let mta: MtaFixture;
let ca: TestCa;
let good: MxHost;
let misnamed: MxHost;
let v6: MxHost;
let world: SendWorld;

const policy = (mode: string, mx: string) => `version: STSv1\r\nmode: ${mode}\r\nmx: ${mx}\r\nmax_age: 86400\r\n`;
const POLICIES: Record<string, string> = {
  'mta-sts.enforce-ok.test': policy('enforce', 'mx.enforce-ok.test'),
  'mta-sts.enforce-bad.test': policy('enforce', 'mx.enforce-bad.test'),
  'mta-sts.testing-bad.test': policy('testing', 'mx.testing-bad.test'),
};

test.before(async () => {
  mta = await MtaFixture.start();
  ca = createTestCa();
  const policyPair = ca.issue('policy', Object.keys(POLICIES));
  const policyServer = createServer(
    { cert: readFileSync(policyPair.cert), key: readFileSync(policyPair.key) },
    (req, res) => {
      const body =
        req.url === '/.well-known/mta-sts.txt' ? POLICIES[String(req.headers.host).replace(/:\d+$/, '')] : null;
      if (!body) return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain' }).end(body);
    },
  );
  await new Promise<void>((resolve) => policyServer.listen(443, POLICY_ADDRESS, resolve));
  mta.closeWith({ close: () => new Promise((resolve) => policyServer.close(resolve)) });
  good = await mta.mxHost({ tls: ca.issue('mx-good', ['mx.enforce-ok.test']) }, GOOD_MX);
  misnamed = await mta.mxHost({ tls: ca.issue('mx-misnamed', ['somewhere-else.test']) }, MISNAMED_MX);
  v6 = await mta.mxHost({ tls: ca.issue('mx-v6', ['mx.v6only.test', 'mx.dual.test']) }, '::1');

  for (const [domain, address] of [
    ['enforce-ok.test', GOOD_MX],
    ['enforce-bad.test', MISNAMED_MX],
    ['testing-bad.test', MISNAMED_MX],
  ]) {
    mta.route(domain, `mx.${domain}`, address);
    mta.dns.zone.txt.set(`_mta-sts.${domain}`, ['v=STSv1; id=20261125']);
    mta.dns.zone.a.set(`mta-sts.${domain}`, [POLICY_ADDRESS]);
  }
  mta.route('v6only.test', 'mx.v6only.test', '::1');
  mta.route('dual.test', 'mx.dual.test', DOWN_ADDRESS);
  mta.dns.zone.aaaa.set('mx.dual.test', ['::1']);

  world = await mta.seed({ SEND_RETRY_BASE_MS: '300', NODE_EXTRA_CA_CERTS: join(ca.dir, 'ca.crt') });
  // Yesterday's counts for enforce-bad.test: the daemon's daily job reports them at boot, by mail.
  mta.dns.zone.txt.set('_smtp._tls.enforce-bad.test', ['v=TLSRPTv1; rua=mailto:tls-reports@enforce-bad.test']);
  await mta.withDatabase((db) =>
    db.sequelize.query(
      `INSERT INTO tls_report_counts (day, policy_domain, policy_type, policy_hash, policy_strings, mx_host,
                                      receiving_ip, result_type, sessions)
       VALUES ((now() AT TIME ZONE 'UTC')::date - 1, 'enforce-bad.test', 'sts', md5('[]'), '[]',
               'mx.enforce-bad.test', :address, 'certificate-host-mismatch', 7)`,
      { replacements: { address: MISNAMED_MX } },
    ),
  );
  await mta.startDaemon();
});

test.after(async () => {
  await mta?.close();
});

const send = (to: string) => mta.send([to]);
const logOf = (id: string): Promise<{ status: string; events: { type: string; data: any }[] }> => mta.log(id);

interface CountRow {
  policy_type: string;
  policy_strings: string[];
  mx_host: string;
  receiving_ip: string;
  result_type: string;
  sessions: number;
}

async function countsOf(domain: string): Promise<CountRow[]> {
  const db = await openWorldDatabase(world);
  try {
    return await db.sequelize.query<CountRow>(
      `SELECT policy_type, policy_strings, mx_host, receiving_ip, result_type, sessions::int AS sessions
         FROM tls_report_counts WHERE policy_domain = :domain AND day = (now() AT TIME ZONE 'UTC')::date
        ORDER BY result_type, receiving_ip`,
      { replacements: { domain }, type: QueryTypes.SELECT },
    );
  } finally {
    await db.close();
  }
}

const delivered = (id: string) =>
  waitFor('the log to say DELIVERED', async () => (await logOf(id)).status === 'DELIVERED', { timeoutMs: 30_000 });

test('MTA-STS enforce, a certificate for the MX name under the test CA: delivered over TLS, a success counted', async () => {
  const id = await send('a@enforce-ok.test');
  await delivered(id);
  assert.is(good.messages.length, 1);
  assert.ok(good.messages[0].secure, 'over TLS');
  // The counts commit with the outcome: DELIVERED means they are there.
  const [row, ...others] = await countsOf('enforce-ok.test');
  assert.equal(others, []);
  assert.is(row.policy_type, 'sts');
  assert.equal(row.policy_strings, POLICIES['mta-sts.enforce-ok.test'].trim().split('\r\n'));
  assert.equal([row.mx_host, row.receiving_ip, row.result_type], ['mx.enforce-ok.test', GOOD_MX, '']);
  assert.is(row.sessions, 1);
});

test('MTA-STS enforce, a certificate for another name: deferred, certificate-host-mismatch counted', async () => {
  const id = await send('b@enforce-bad.test');
  await waitFor('a deferral in the timeline', async () => (await logOf(id)).events.some((e) => e.type === 'deferred'), {
    timeoutMs: 30_000,
  });
  const log = await logOf(id);
  assert.is.not(log.status, 'DELIVERED');
  assert.equal(
    misnamed.messages.filter((m) => m.to.includes('b@enforce-bad.test')),
    [],
    'nothing sent to a host that failed the policy',
  );
  const rows = await countsOf('enforce-bad.test');
  assert.equal(
    rows.map((r) => [r.policy_type, r.mx_host, r.receiving_ip, r.result_type]),
    [['sts', 'mx.enforce-bad.test', MISNAMED_MX, 'certificate-host-mismatch']],
  );
  assert.ok(rows[0].sessions >= 1);
  assert.ok(rows[0].policy_strings.includes('mode: enforce'));
});

test('the daily job at boot: the report mail reaches the enforce domain despite its failing TLS, not counted', async () => {
  // RFC 8460 §5.3: reports are delivered despite any TLS failure, and their sessions are not reported.
  await waitFor(
    'the report mail at the misnamed MX',
    () => misnamed.messages.some((m) => m.to.includes('tls-reports@enforce-bad.test')),
    {
      timeoutMs: 30_000,
    },
  );
  const mail = misnamed.messages.find((m) => m.to.includes('tls-reports@enforce-bad.test'))!;
  const raw = mail.raw.toString();
  assert.match(raw, /^TLS-Report-Domain: enforce-bad\.test$/im);
  assert.match(raw, /^Content-Type: multipart\/report; report-type="?tlsrpt"?;/im);
  assert.ok(mail.secure, 'STARTTLS still used, its certificate not checked');
  const rows = await countsOf('enforce-bad.test');
  assert.equal(
    rows.filter((r) => r.policy_type !== 'sts'),
    [],
    'the report session is not counted',
  );
  const db = await openWorldDatabase(world);
  try {
    const marks = await db.sequelize.query<{ finished: boolean; outcome: { uri: string; ok: boolean }[] }>(
      `SELECT finished_at IS NOT NULL AS finished, outcome FROM tls_report_sends WHERE policy_domain = 'enforce-bad.test'`,
      { type: QueryTypes.SELECT },
    );
    assert.equal(
      marks.map((m) => [m.finished, m.outcome.map((o) => [o.uri, o.ok])]),
      [[true, [['mailto:tls-reports@enforce-bad.test', true]]]],
    );
  } finally {
    await db.close();
  }
});

test('MTA-STS testing, a certificate for another name: delivered, the mismatch counted', async () => {
  const id = await send('c@testing-bad.test');
  await delivered(id);
  assert.ok(misnamed.messages.some((m) => m.to.includes('c@testing-bad.test') && m.secure));
  const rows = await countsOf('testing-bad.test');
  assert.equal(
    rows.map((r) => [r.policy_type, r.mx_host, r.receiving_ip, r.result_type, r.sessions]),
    [['sts', 'mx.testing-bad.test', MISNAMED_MX, 'certificate-host-mismatch', 1]],
  );
  assert.ok(rows[0].policy_strings.includes('mode: testing'));
});

test('IPv6: an MX with only an AAAA record ::1 gets the mail over IPv6', async () => {
  const id = await send('d@v6only.test');
  await delivered(id);
  const message = v6.messages.find((m) => m.to.includes('d@v6only.test'));
  assert.ok(message, 'arrived at [::1]:25');
  assert.is(message!.remoteAddress, '::1');
  const rows = await countsOf('v6only.test');
  assert.equal(
    rows.map((r) => [r.policy_type, r.receiving_ip, r.result_type]),
    [['no-policy-found', '::1', '']],
  );
});

test('A and AAAA: the IPv4 address is down, the IPv6 one takes the mail', async () => {
  const id = await send('e@dual.test');
  await delivered(id);
  const message = v6.messages.find((m) => m.to.includes('e@dual.test'));
  assert.ok(message);
  assert.is(message!.remoteAddress, '::1');
  assert.equal(
    (await logOf(id)).events.filter((e) => e.type === 'deferred'),
    [],
    'no deferral: the fallback is within one attempt',
  );
});

test.run();
