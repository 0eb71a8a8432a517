// The report readers on their own: DSNs with several recipients and encodings, a DSN nested in
// multipart/mixed, plain NDRs against auto-replies, ARF identities, DMARC parsing and its limits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { zipArchive } from './helpers/archives.ts';
import { readReport } from '../daemon/modules/inbound-mail/mime.ts';
import { readArf, readDsn, readPlainNdr } from '../daemon/modules/inbound-mail/reports.ts';
import { judgeFeedbackSigner } from '../daemon/modules/inbound-mail/feedback-auth.ts';
import {
  MAX_REPORT_XML_BYTES,
  parseAggregateReport,
  reportXml,
  UnreadableReportError,
} from '../daemon/modules/dmarc/parse.ts';

const crlf = (text: string) => text.replace(/\r?\n/g, '\r\n');

const status = `Reporting-MTA: dns; mx.example.net

Final-Recipient: rfc822; a@example.org
Action: failed
Status: 5.2.1
Diagnostic-Code: smtp; 550 5.2.1 mailbox disabled

Final-Recipient: rfc822; b@example.org
Action: delayed
Status: 4.2.2
Diagnostic-Code: smtp; 452 4.2.2 mailbox full

Final-Recipient: rfc822; c@example.org
Action: delivered
Status: 2.0.0
`;

test('a DSN with several recipients: hard for 5.x.x failed, soft for delayed, nothing for delivered; soft first', () => {
  const raw = crlf(`From: MAILER-DAEMON@mx.example.net
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: multipart/report; report-type=delivery-status; boundary="inner"

--inner
Content-Type: text/plain

Some problems.
--inner
Content-Type: message/delivery-status
Content-Transfer-Encoding: base64

${Buffer.from(crlf(status)).toString('base64').replace(/.{76}/g, '$&\r\n')}
--inner
Content-Type: text/rfc822-headers

Message-ID: <abc@acme.test>
X-Service-Email-Id: 0b9f2a8e-4a4c-4d3e-9a0e-1f2e3d4c5b6a
--inner--
--outer--
`);
  const report = readReport(raw);
  assert.is(report.reportType, 'delivery-status');
  const reports = readDsn(report);
  assert.equal(
    reports.map((r) => [r.bounceType, r.recipients, r.diagnostic]),
    [
      ['soft', ['b@example.org'], '4.2.2 452 4.2.2 mailbox full'],
      ['hard', ['a@example.org'], '5.2.1 550 5.2.1 mailbox disabled'],
    ],
  );
  assert.equal(reports[0].messageIds, ['<abc@acme.test>']);
  assert.is(reports[0].emailId, '0b9f2a8e-4a4c-4d3e-9a0e-1f2e3d4c5b6a');
});

test('a plain NDR: the enhanced code decides, the recipients named in the text are the bounced ones', () => {
  const headers = readReport(
    crlf('From: Mail Delivery System <MAILER-DAEMON@mx.example.net>\nSubject: Mail delivery failed\n\nbody'),
  ).headers;
  const hard = readPlainNdr(
    headers,
    'a@example.org: 550 5.1.1 no such user',
    ['a@example.org', 'b@example.org'],
    false,
  );
  assert.is(hard?.bounceType, 'hard');
  assert.equal(hard?.recipients, ['a@example.org']);
  const soft = readPlainNdr(headers, 'b@example.org: 452 4.2.2 over quota, giving up', ['b@example.org'], false);
  assert.is(soft?.bounceType, 'soft');
  const reply = readReport(crlf('From: Jane <a@example.org>\nSubject: Re: Hello\n\nThanks!')).headers;
  assert.is(readPlainNdr(reply, 'Thanks! Call me at 555 1234.', ['a@example.org'], false), null);
  const ooo = readReport(crlf('From: a@example.org\nSubject: Automatic reply: away\n\nAway.')).headers;
  assert.is(readPlainNdr(ooo, 'I am away until 5.1.2026', ['a@example.org'], true), null);
});

test('ARF: Original-Mail-From with our return path names the send; recipients are deduplicated', () => {
  const raw = crlf(`Content-Type: multipart/report; report-type=feedback-report; boundary="b"

--b
Content-Type: message/feedback-report

Feedback-Type: abuse
Version: 1
Original-Mail-From: <bounce-0b9f2a8e-4a4c-4d3e-9a0e-1f2e3d4c5b6a@bounces.acme.test>
Original-Rcpt-To: <Jane@Example.org>
Removal-Recipient: jane@example.org
--b--
`);
  const arf = readArf(readReport(raw));
  assert.is(arf?.emailId, '0b9f2a8e-4a4c-4d3e-9a0e-1f2e3d4c5b6a');
  assert.equal(arf?.recipients, ['jane@example.org']);
  assert.is(arf?.type, 'complained');
});

test('a feedback signer counts only over the header the report is read by: singletons once, its Content-Type signed', () => {
  const contentType = 'multipart/report; report-type=feedback-report; boundary="b"';
  const headers = readReport(
    crlf(
      `From: feedback@arf.mail.yahoo.com\nContent-Type: multipart/report;\n report-type=feedback-report; boundary="b"\n\nbody`,
    ),
  ).headers;
  const signature = {
    signingDomain: 'yahoo.com',
    result: 'pass',
    unsignedBodyBytes: 0,
    signedContentType: contentType,
  };
  const judge = (signedContentType: string | null, on = headers) =>
    judgeFeedbackSigner({ results: [{ ...signature, signedContentType }] }, ['yahoo.com'], on);
  assert.equal(judge(contentType), { verified: true, signer: 'yahoo.com' }, 'folding aside, the same value');
  assert.equal(judge(null), {
    verified: false,
    reason: 'its DKIM signature (d=yahoo.com) does not cover the Content-Type header the report is read by',
  });
  // A parser that split the header otherwise would have signed another instance than the one read.
  assert.is(judge(contentType.replace('"b"', '"B"')).verified, false, 'a boundary is case-sensitive');
  const twice = readReport(
    crlf(
      `From: a@evil.example\nFrom: feedback@arf.mail.yahoo.com\nSubject: x\nSubject: y\nContent-Type: ${contentType}\n\nbody`,
    ),
  ).headers;
  const refused = judge(contentType, twice);
  assert.is(refused.verified, false);
  assert.match(
    !refused.verified ? refused.reason : '',
    /^it carries 2 From headers, 2 Subject headers, where RFC 5322 allows one/,
  );
});

const xml = `<?xml version="1.0"?><feedback><report_metadata><org_name>Example</org_name><report_id>r1</report_id>
<date_range><begin>1700000000</begin><end>1700086399</end></date_range></report_metadata>
<policy_published><domain>Acme.Test.</domain><p>reject</p></policy_published>
<record><row><source_ip>192.0.2.1</source_ip><count>3</count><policy_evaluated><disposition>reject</disposition><dkim>fail</dkim><spf>fail</spf></policy_evaluated></row>
<identifiers><header_from>acme.test</header_from></identifiers>
<auth_results><dkim><domain>relay.example</domain><result>pass</result></dkim><dkim><domain>acme.test</domain><result>fail</result></dkim><spf><domain>relay.example</domain><result>pass</result></spf></auth_results></record>
</feedback>`;

test("DMARC: a single record, the header-From domain's DKIM result preferred, domain normalised", () => {
  const report = parseAggregateReport(xml);
  assert.is(report.domain, 'acme.test');
  assert.equal(report.policy, { p: 'reject' });
  assert.equal(report.records, [
    {
      sourceIp: '192.0.2.1',
      count: 3,
      disposition: 'reject',
      headerFrom: 'acme.test',
      dkimAligned: false,
      spfAligned: false,
      dkimDomain: 'acme.test',
      dkimResult: 'fail',
      spfDomain: 'relay.example',
      spfResult: 'pass',
    },
  ]);
});

/** The reason an attachment is refused with, or null when it is not. */
const refusal = (content: Uint8Array) =>
  reportXml(content).then(
    () => null,
    (error: Error) => (error instanceof UnreadableReportError ? error.message : `not ours: ${error.message}`),
  );

test('DMARC: gzip and zip are recognised by their bytes; other attachments are not reports; bombs and non-reports refused', async () => {
  assert.is(await reportXml(gzipSync(Buffer.from(xml))), xml);
  assert.is(await reportXml(zipArchive([{ name: 'report.xml', content: Buffer.from(xml) }])), xml);
  assert.is(await reportXml(Buffer.from('%PDF-1.4 not a report')), null);
  assert.match(
    (await refusal(gzipSync(new Uint8Array(MAX_REPORT_XML_BYTES + 1))))!,
    /the gzip report inflates more than 200 times its compressed size .*: a decompression bomb/,
  );
  // Text that deflates only ~1.3:1 passes the ratio guard and meets the size cap.
  const incompressible = Buffer.from(randomBytes(MAX_REPORT_XML_BYTES * 0.75 + 3).toString('base64'));
  assert.match(
    (await refusal(gzipSync(incompressible, { level: 1 })))!,
    /the gzip report inflates past the 20971520-byte limit \(its header claims \d+ bytes\)/,
  );
  assert.match(
    (await refusal(zipArchive([{ name: 'report.xml', content: Buffer.alloc(MAX_REPORT_XML_BYTES + 1) }])))!,
    /zip entry "report\.xml" inflates more than 200 times its compressed size/,
  );
  assert.match(
    (await refusal(
      zipArchive([{ name: 'report.xml', content: Buffer.alloc(MAX_REPORT_XML_BYTES + 1), stored: true }]),
    ))!,
    /zip entry "report\.xml" inflates past the 20971520-byte limit/,
  );
  assert.throws(
    () => parseAggregateReport('<html><body>hi</body></html>'),
    (error: Error) => /no <feedback> element/.test(error.message),
  );
});

test('DMARC: zips that lie about an entry, hide one or are built oddly are refused with the reason', async () => {
  const content = Buffer.from(xml);
  const cases: [Buffer, RegExp][] = [
    [zipArchive([{ name: 'report.xml', content, crc: 1 }]), /zip entry "report\.xml" fails its CRC check/],
    [
      zipArchive([{ name: 'report.xml', content, stored: true, crc: 1 }]),
      /zip entry "report\.xml" fails its CRC check/,
    ],
    [
      zipArchive([{ name: 'report.xml', content, claimedSize: 10 }]),
      /zip entry "report\.xml" inflates to \d+ bytes, not the 10 its header claims/,
    ],
    [
      zipArchive(Array.from({ length: 6 }, (_, i) => ({ name: `r${i}.xml`, content }))),
      /the zip has 6 entries; a report has one \(at most 5 accepted\)/,
    ],
    [zipArchive([{ name: 'inner.gz', content }]), /zip entry "inner\.gz" is itself an archive/],
    [zipArchive([{ name: 'report.xml', content: zipArchive([{ name: 'a.xml', content }]) }]), /is itself an archive/],
    [gzipSync(gzipSync(content)), /the gzip report is itself an archive/],
    [gzipSync(content).subarray(0, 40), /the gzip report is truncated/],
  ];
  for (const [archive, reason] of cases) assert.match((await refusal(archive)) ?? 'accepted', reason);
  const zip = zipArchive([{ name: 'report.xml', content }]);
  // The entry's data cut short: its central directory still says where it ends.
  const cut = Buffer.concat([zip.subarray(0, 60), zip.subarray(zip.length - 22 - 46 - 10)]);
  assert.match((await refusal(cut)) ?? 'accepted', /zip/);
  assert.is(await reportXml(zipArchive([{ name: 'readme.txt', content: Buffer.from('hi') }])), null);
});

test.run();
