// The SMTP edge reads the body of a simply shaped message itself (daemon/smtp/submission-body.ts)
// instead of streaming it through mailparser: on every message of a corpus (nodemailer's output for
// text, HTML, both, UTF-8 in quoted-printable and base64, bare LF; hand-written ones with preambles,
// quoted boundaries, odd quoted-printable, empty parts), the send it makes must be exactly the one
// the whole-message mailparser parse makes, and the shapes it does not read (attachments, related
// parts, other charsets, format=flowed, malformed base64, padded delimiters) must go to mailparser.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import nodemailer from 'nodemailer';
import { simpleParser } from 'mailparser';
import { parseSubmission, submissionOf } from '../daemon/smtp/submission-message.ts';
import { bodyStartOf, decodeQuotedPrintable, simpleBodyOf, withoutCrBeforeLf } from '../daemon/smtp/submission-body.ts';

const OPTIONS = { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true };
const envelope = { mailFrom: 'app@example.com', rcptTo: ['ann@example.org', 'hidden@example.org'] };

async function compose(mail: Record<string, unknown>, newline: 'windows' | 'unix' = 'windows'): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline });
  const info = await transport.sendMail({ from: 'App <app@example.com>', to: 'Ann <ann@example.org>', ...mail });
  return info.message as unknown as Buffer;
}

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'utf8');

/** The send or the refusal, as a comparable value. */
async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    return { send: await run() };
  } catch (error) {
    const e = error as Error & { details?: unknown };
    return { refused: e.message, details: e.details };
  }
}

/** Whether the fast reader takes the message (rather than handing it to mailparser). */
async function readDirectly(raw: Buffer): Promise<boolean> {
  const start = bodyStartOf(raw);
  if (start === -1) return false;
  const head = await simpleParser(raw.subarray(0, start), OPTIONS);
  return simpleBodyOf(raw, start, head.headerLines) !== null;
}

async function same(name: string, raw: Buffer, direct: boolean): Promise<void> {
  const before = Buffer.from(raw);
  const fast = await outcome(() => parseSubmission(raw, envelope));
  // The reader works in place on its own buffers only: a fallback to mailparser needs the bytes as sent.
  assert.ok(raw.equals(before), `${name}: the message's bytes were changed`);
  const slow = await outcome(async () => submissionOf(await simpleParser(raw, OPTIONS), envelope));
  assert.equal(fast, slow, `${name}: the send differs from mailparser's`);
  assert.is(await readDirectly(raw), direct, `${name}: ${direct ? 'should' : 'should not'} be read directly`);
}

const html = `<!doctype html><html><body>${Array.from({ length: 200 }, (_, n) => `<p>Line ${n}: report</p>`).join('\n')}</body></html>`;
const text = `Report\n\n${Array.from({ length: 200 }, (_, n) => `Line ${n}: report`).join('\n')}\n`;
const unicode = 'Grüße aus Köln — 日本語のテキスト 🙂 ';

test('nodemailer shapes are read directly, with the send mailparser gives', async () => {
  await same('text and html', await compose({ subject: 'Weekly', text, html }), true);
  await same('text only', await compose({ subject: 'Weekly', text }), true);
  await same('html only', await compose({ subject: 'Weekly', html }), true);
  await same(
    'utf-8 mostly ascii (qp)',
    await compose({ subject: unicode, text: text + unicode, html: html + unicode }),
    true,
  );
  await same(
    'utf-8 dense (base64)',
    await compose({ subject: 'x', text: unicode.repeat(50), html: unicode.repeat(50) }),
    true,
  );
  await same('forced base64', await compose({ subject: 'x', text, html, textEncoding: 'base64' }), true);
  await same(
    'forced quoted-printable, long lines and trailing spaces',
    await compose({
      subject: 'x',
      text: `${'a'.repeat(300)}   \nend \t\n`,
      html: `<p>${'b'.repeat(500)}</p>`,
      textEncoding: 'quoted-printable',
    }),
    true,
  );
  await same('bare LF', await compose({ subject: 'x', text, html }, 'unix'), true);
  await same(
    'custom headers, cc, reply-to, idempotency key',
    await compose({
      subject: '=?utf-8?Q?Gr=C3=BC=C3=9Fe?= Köln',
      cc: 'Bob <hidden@example.org>',
      replyTo: 'help@example.com',
      text,
      html,
      headers: { 'X-Campaign': 'autumn', 'Idempotency-Key': 'key-1', 'List-Id': '<news.example.com>' },
    }),
    true,
  );
  await same('text ending in blank lines', await compose({ subject: 'x', text: 'hello\n\n\n' }), true);
});

test('hand-written simple shapes are read directly and match', async () => {
  const head = ['From: app@example.com', 'To: ann@example.org', 'Subject: hand', 'MIME-Version: 1.0'];
  await same(
    'preamble, epilogue, quoted boundary',
    crlf([
      ...head,
      'Content-Type: multipart/alternative;',
      ' boundary="b 1"',
      '',
      'This is a preamble.',
      '--b 1',
      'Content-Type: text/plain; charset=us-ascii',
      '',
      'plain line',
      '',
      '--b 1',
      'Content-Type: text/html; charset="UTF-8"',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '<p>caf=C3=A9 =3D soft=',
      'break =ZZ kept, lower =c3=a9 </p>  ',
      '--b 1--',
      'epilogue',
      '',
    ]),
    true,
  );
  // mailsplit gives an empty part the delimiter's line break ("\n"): left to mailparser.
  await same(
    'an empty text part beside html',
    crlf([
      ...head,
      'Content-Type: multipart/alternative; boundary=x',
      '',
      '--x',
      'Content-Type: text/plain',
      '',
      '',
      '--x',
      'Content-Type: text/html',
      '',
      '<b>only html</b>',
      '--x--',
      '',
    ]),
    false,
  );
  await same('no content type at all', crlf([...head, '', 'just text', '']), true);
  await same('html root', crlf([...head, 'Content-Type: text/html; charset=utf-8', '', '<p>hi</p>', '']), true);
  await same('empty body', crlf([...head, 'Content-Type: text/plain', '', '']), true);
});

test('other shapes go to mailparser, with the same send', async () => {
  const head = ['From: app@example.com', 'To: ann@example.org', 'Subject: hand', 'MIME-Version: 1.0'];
  await same(
    'an attachment',
    await compose({ subject: 'x', text, html, attachments: [{ filename: 'a.txt', content: 'attached' }] }),
    false,
  );
  await same(
    'an inline image (multipart/related)',
    await compose({
      subject: 'x',
      html: '<img src="cid:logo@x">',
      attachments: [{ filename: 'logo.png', content: Buffer.from('png'), cid: 'logo@x', contentType: 'image/png' }],
    }),
    false,
  );
  await same('latin-1', crlf([...head, 'Content-Type: text/plain; charset=iso-8859-1', '', 'caf\u00e9', '']), false);
  await same(
    'format=flowed',
    crlf([...head, 'Content-Type: text/plain; format=flowed', '', 'soft ', 'wrap', '']),
    false,
  );
  await same(
    'malformed base64',
    crlf([...head, 'Content-Type: text/plain', 'Content-Transfer-Encoding: base64', '', 'aGVsbG8*gd29ybGQ=', '']),
    false,
  );
  await same(
    'a padded delimiter',
    crlf([
      ...head,
      'Content-Type: multipart/alternative; boundary=x',
      '',
      '--x  ',
      'Content-Type: text/plain',
      '',
      'padded',
      '--x--',
      '',
    ]),
    false,
  );
  await same('headers only', Buffer.from(head.join('\r\n')), false);
  await same(
    'an attachment disposition on the root',
    crlf([...head, 'Content-Disposition: attachment', '', 'x', '']),
    false,
  );
});

test('quoted-printable bodies of random bytes give the text mailparser gives', async () => {
  // Runs of the characters the decoder treats specially, in any order: every interplay of trailing
  // whitespace, soft breaks, lone CRs and escapes (a seeded generator: the same corpus each run).
  const pieces = ['=', '==', ' ', '\t', '\r', '\n', '\r\n', '=\r\n', '= \r\n', '3D', 'e9', 'C3=A9', 'x', 'Z', ' \t '];
  let seed = 51;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const head = [
    'From: app@example.com',
    'To: ann@example.org',
    'Subject: qp',
    'Content-Type: text/plain; charset=utf-8',
  ];
  // Every other body has no lone CR: the decoder then goes line by line, otherwise byte by byte.
  for (let n = 0; n < 400; n++) {
    const from = n % 2 ? pieces : pieces.filter((piece) => piece !== '\r');
    const body = Array.from(
      { length: 1 + Math.floor(random() * 40) },
      () => from[Math.floor(random() * from.length)],
    ).join('');
    const raw = Buffer.concat([
      crlf([...head, 'Content-Transfer-Encoding: quoted-printable', '', '']),
      Buffer.from(`ok ${body}`, 'latin1'),
    ]);
    await same(`qp ${JSON.stringify(body)}`, raw, true);
    // The same bytes unencoded (7bit): line ends normalised as mailparser does, the message untouched.
    const plain = Buffer.concat([crlf([...head, '', '']), Buffer.from(`ok ${body}`, 'latin1')]);
    await same(`7bit ${JSON.stringify(body)}`, plain, true);
  }
});

test('quoted-printable decodes as libqp does', () => {
  const decoded = (input: string) => decodeQuotedPrintable(Buffer.from(input, 'latin1')).toString('latin1');
  assert.is(decoded('a=3Db'), 'a=b');
  assert.is(decoded('soft=\r\nbreak'), 'softbreak');
  assert.is(decoded('trail  \r\nnext'), 'trail\r\nnext');
  assert.is(decoded('keep =ZZ and ='), 'keep =ZZ and ');
  assert.is(decoded('=e9=E9'), '\u00e9\u00e9');
  assert.is(decoded('==\r\n41'), 'A');
  assert.is(decoded('= \rX'), '=\rX');
  assert.is(decoded('tail=  '), 'tail');
  const unix = (input: string, owned: boolean) =>
    withoutCrBeforeLf(Buffer.from(input, 'latin1'), owned).toString('latin1');
  for (const owned of [true, false]) {
    assert.is(unix('a\r\nb\r\r\nc\rd\n\r', owned), 'a\nb\r\nc\rd\n\r');
    assert.is(unix('\nplain\n', owned), '\nplain\n');
  }
});

test.run();
