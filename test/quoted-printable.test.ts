// The quoted-printable encoder (daemon/mail/quoted-printable.ts) against nodemailer's Encoder, the code
// it stands in for, fed as mime-node feeds a text part (the whole content, one chunk): the same bytes
// for any text, long lines, whitespace at line ends and at the end, `=`, CR/LF mixes, non-ASCII, and
// inputs past the Encoder's 64 KiB slices; and, asked for CRLF line ends, those bytes as they go out.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { Encoder } from 'nodemailer/lib/qp';
import { encodeQuotedPrintable } from '../daemon/mail/quoted-printable.ts';

function nodemailerEncoded(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const encoder = new Encoder();
    const chunks: Buffer[] = [];
    encoder.on('data', (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
    encoder.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')));
    encoder.on('error', reject);
    encoder.end(Buffer.from(text, 'utf8'));
  });
}

async function assertSame(text: string): Promise<void> {
  const expected = await nodemailerEncoded(text);
  // Told the text is printable ASCII (when it is), the encoder skips its own scan: the same bytes.
  if (/^[\t\n\r\x20-\x7e]*$/.test(text)) assert.is(encodeQuotedPrintable(text, true), expected, 'told printable');
  // Asked for CRLF line ends: the same bytes with every bare LF made CRLF, as the message goes out.
  assert.is(encodeQuotedPrintable(text, false, true), expected.replace(/(?<!\r)\n/g, '\r\n'), 'CRLF line ends');
  const actual = encodeQuotedPrintable(text);
  if (actual === expected) return;
  let at = 0;
  while (actual[at] === expected[at]) at++;
  assert.fixture(
    JSON.stringify(actual.slice(Math.max(0, at - 100), at + 40)),
    JSON.stringify(expected.slice(Math.max(0, at - 100), at + 40)),
    `differs at ${at} of ${expected.length} (input of ${text.length} characters)`,
  );
}

// Characters the encoder and the wrapping treat specially, often; hex digits after `=` and break
// points near the window's end; others now and then.
const unit = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constantFrom('a', 'Z', ' ', '\t', '=', '\n', '\r', '\r\n', '.', ',', '!', '?', '3', 'D', 'f', 'é'),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom('😀', '\u0001', '\x7f', 'ÿ', '\ud800', '\u2028', '\u00a0', '€', '  ', '\t\t'),
  },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 1 }) },
);
const shortText = fc.string({ unit, maxLength: 400 });
// Long lines: a word repeated, with the separator a generated one.
const longLines = fc
  .tuple(fc.string({ unit, minLength: 1, maxLength: 12 }), fc.string({ unit, maxLength: 3 }), fc.nat({ max: 60 }))
  .map(([word, separator, count]) => Array.from({ length: count }, () => word).join(separator));
// Past 64 KiB: a generated fragment repeated, so slices start at generated places in it.
const beyondSlice = fc
  .tuple(fc.string({ unit, minLength: 1, maxLength: 200 }), fc.nat({ max: 40_000 }))
  .map(([fragment, extra]) => fragment.repeat(Math.ceil((66_000 + extra) / fragment.length)));

test('the same bytes as nodemailer’s Encoder on any short text', async () => {
  await fc.assert(fc.asyncProperty(fc.oneof(shortText, longLines), assertSame), { numRuns: 5_000 });
});

test('the same bytes past the Encoder’s 64 KiB slices', async () => {
  await fc.assert(fc.asyncProperty(beyondSlice, assertSame), { numRuns: 150 });
});

test('cases by hand: empty, whitespace at ends, long runs of it, equals signs, UTF-8 at breaks', async () => {
  const cases = [
    '',
    ' ',
    'a ',
    'a \n',
    'a\t\r\nb',
    ' '.repeat(200),
    ' '.repeat(70_000),
    `x${' '.repeat(70_000)}`,
    ' '.repeat(65_536),
    `x${' '.repeat(65_536)}`,
    `x${' '.repeat(65_537)}`,
    `${'y'.repeat(65_535)} \n`,
    `${'a'.repeat(65_536)}${'é'.repeat(300)}`,
    '='.repeat(500),
    `${'a'.repeat(73)}=b`,
    `${'a'.repeat(74)}é${'b'.repeat(100)}`,
    `${'😀'.repeat(100)}`,
    'line one\nline two\r\nline three\rline four\n'.repeat(400),
    `${'word '.repeat(30)}\n`.repeat(200),
  ];
  for (const text of cases) await assertSame(text);
});

test.run();
