// CRLF line ends (daemon/mail/line-ends.ts) against nodemailer's LeWindows, the stream the capture
// transport used: the same bytes for any message, however LeWindows was fed it; and MailTransports.build,
// which uses it, against nodemailer's `newline: 'windows'`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import LeWindows from 'nodemailer/lib/mime-node/le-windows';
import { MailTransports } from '../daemon/mail/transport.ts';
import { lineEndsOf, withCrlfLineEnds } from '../daemon/mail/line-ends.ts';
import { chunkedBytes } from './helpers/chunks.ts';
import { builtByNodemailer, fixedSignedMessage } from './helpers/fixed-message.ts';

function nodemailerCrlf(chunks: Buffer[]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const stream = new LeWindows();
    const out: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => out.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(out)));
    stream.on('error', reject);
    for (const chunk of chunks) stream.write(chunk);
    stream.end();
  });
}

const byte = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(0x0d, 0x0a, 0x2e) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 255 }) },
);
// LeWindows never sees an empty chunk from a pipe (and would forget the byte before one).
const message = chunkedBytes(byte, 300).map((chunks) => ({
  data: Buffer.concat(chunks),
  chunks: chunks.filter((chunk) => chunk.length > 0),
}));

test('the same bytes as nodemailer’s LeWindows on any message, fed in any chunks', async () => {
  await fc.assert(
    fc.asyncProperty(message, async ({ data, chunks }) => {
      const expected = await nodemailerCrlf(chunks);
      assert.is(withCrlfLineEnds(data).toString('latin1'), expected.toString('latin1'));
    }),
    { numRuns: 3_000 },
  );
});

test('cases by hand: a leading LF, CRLF kept, lone CR kept, nothing to do', () => {
  const cases: [string, string][] = [
    ['\na', '\r\na'],
    ['a\r\nb\nc\r', 'a\r\nb\r\nc\r'],
    ['\n\n', '\r\n\r\n'],
    ['abc', 'abc'],
    ['', ''],
  ];
  for (const [input, expected] of cases) {
    assert.is(withCrlfLineEnds(Buffer.from(input, 'latin1')).toString('latin1'), expected, JSON.stringify(input));
  }
});

test('lineEndsOf: bare LFs and whitespace before a line end, as the RegExps it stands in for find them', () => {
  const cases = ['', 'a', 'a\r\nb\r\n', '\n', 'a\nb', 'a \r\nb', 'a\t\n', 'a\r\r\n', ' \r\r\n', 'x\r\n \n', '\r\n\t'];
  for (const text of cases)
    assert.equal(
      lineEndsOf(text),
      { bareLf: /(?<!\r)\n/.test(text), whitespaceBefore: /[ \t]\r?\n/.test(text) },
      JSON.stringify(text),
    );
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom('a', ' ', '\t', '\r', '\n') }), (text) => {
      const ends = lineEndsOf(text);
      return ends.bareLf === /(?<!\r)\n/.test(text) && ends.whitespaceBefore === /[ \t]\r?\n/.test(text);
    }),
    { numRuns: 2000 },
  );
});

test('MailTransports.build: the same signed message as nodemailer’s newline: windows', async () => {
  const message = fixedSignedMessage({
    text: 'Lines\nwith bare LF\r\nand CRLF\rand a lone CR\n',
    html: '<p>one</p>\n<p>two</p>\n',
    attachments: [{ filename: 'a.txt', content: 'line\nline\n' }],
  });
  const expected = await builtByNodemailer(message);
  const built = await new MailTransports({ smtpUrl: null, smtpMaxConnections: 1, smtpMaxMessages: 1 }).build(message);
  assert.is(built.message.toString('latin1'), expected);
});

test.run();
