// The SMTP edge reads a submitted header block with mailparser's own field reading but without its
// stream (daemon/smtp/submission-headers.ts): on a corpus of header blocks (encoded words, groups,
// comments, folded and repeated fields, 8-bit UTF-8, List-* fields, a CR alone inside a line) it must
// give exactly what simpleParser gives for the block, and the blocks it does not split (a bare LF, an
// mbox `From ` line, a line that is no field, a leading fold) must be left to simpleParser.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as mailparser from 'mailparser';
import { headerLinesOf, readHeaderBlock } from '../daemon/smtp/submission-headers.ts';

const OPTIONS = { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true };
const block = (lines: string[], newline = '\r\n') => Buffer.from(`${lines.join(newline)}${newline}${newline}`, 'utf8');

/** What submissionOf reads of a parse, as a comparable value (Maps as entry lists). */
function comparable(parsed: Record<string, unknown>): unknown {
  const { headers, headerLines, subject, from, to, cc, replyTo } = parsed as Record<string, unknown> & {
    headers: Map<string, unknown>;
  };
  return JSON.parse(JSON.stringify({ headers: [...headers], headerLines, subject, from, to, cc, replyTo }));
}

async function same(name: string, head: Buffer): Promise<void> {
  const fast = readHeaderBlock(mailparser, head);
  assert.ok(fast, `${name}: should be read without simpleParser`);
  const slow = await mailparser.simpleParser(head, OPTIONS);
  assert.equal(
    comparable(fast as unknown as Record<string, unknown>),
    comparable(slow as unknown as Record<string, unknown>),
    name,
  );
}

test('header blocks are read as simpleParser reads them', async () => {
  await same(
    'nodemailer',
    block([
      'Content-Type: multipart/alternative;',
      ' boundary="--_NmP-5f0c1e0a3b2d4e6f-Part_1"',
      'From: Bench News <news@bench.example>',
      'To: r0@fast1.mta-bench.test',
      'Subject: Your weekly report',
      'Message-ID: <r-0@bench.example>',
      'Date: Sun, 29 Nov 2026 09:10:11 +0000',
      'MIME-Version: 1.0',
      'List-Unsubscribe-Post: List-Unsubscribe=One-Click',
    ]),
  );
  await same(
    'encoded words, groups, comments, several mailboxes',
    block([
      'From: =?UTF-8?Q?Gr=C3=BC=C3=9Fe_App?= <app@example.com>',
      'To: "Doe, Jane" <jane@example.org>, bob@example.org (Bob), team: a@x.example, b@y.example;',
      'Cc: undisclosed-recipients:;',
      'Reply-To: =?ISO-8859-1?B?Sm9zZQ==?= <jose@example.net>',
      'Subject: =?UTF-8?B?5pel5pys6Kqe?= and =?UTF-8?Q?caf=C3=A9?=',
    ]),
  );
  await same(
    'folded, repeated and custom fields',
    block([
      'From: app@example.com',
      'To: a@example.org,',
      '\tb@example.org',
      'To: c@example.org',
      'Subject: a long subject',
      '  folded twice',
      '\tand thrice',
      'X-Campaign: spring',
      'X-Campaign: again',
      'References: <a@x> <b@x>',
      'In-Reply-To: <b@x>',
      'List-Id: Weekly <weekly.example.com>',
      'List-Unsubscribe: <https://example.com/u>, <mailto:u@example.com>',
      'Idempotency-Key: order-42',
      'X-Priority: 1',
      'Importance: high',
      'Date: Sun, 29 Nov 2026 09:10:11 +0100',
    ]),
  );
  await same(
    '8-bit UTF-8 and a lone CR',
    block(['From: Grüße <app@example.com>', 'To: 日本 <jp@example.org>', 'Subject: café\rau lait', 'X-Empty:']),
  );
  await same('no From, no Subject', block(['To: a@example.org', 'Content-Type: text/plain; charset=utf-8']));
});

test('blocks it does not split are left to simpleParser', () => {
  const left = {
    'a bare LF': block(['From: a@example.com', 'Subject: x'], '\n'),
    'a bare LF in one line end': Buffer.from('From: a@example.com\nSubject: x\r\n\r\n'),
    'an mbox From line': block(['From app@example.com Sun Nov 29 09:10:11 2026', 'Subject: x']),
    'an HTTP POST line': block(['POST /x HTTP/1.1', 'Subject: x']),
    'a line that is no field': block(['From: a@example.com', 'not a field', 'Subject: x']),
    'a fold before any field': block([' folded', 'Subject: x']),
    'an empty block': Buffer.from('\r\n\r\n'),
  };
  for (const [name, head] of Object.entries(left)) {
    assert.is(headerLinesOf(head), null, name);
    assert.is(readHeaderBlock(mailparser, head), null, name);
  }
});

test.run();
