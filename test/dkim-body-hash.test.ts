// DKIM's relaxed body hash (daemon/mail/dkim-body-hash.ts) against nodemailer's RelaxedBody, the code it
// stands in for: the same `bh` for any body split into any chunks, on its own and installed as
// RelaxedBody's updateHash inside nodemailer's signer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';
import { hashRelaxedBodyNatively, RelaxedBodyHasher } from '../daemon/mail/dkim-body-hash.ts';
import { splitAt } from './helpers/chunks.ts';
import { builtByNodemailer, fixedSignedMessage } from './helpers/fixed-message.ts';

function nodemailerHash(chunks: Buffer[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const body = new RelaxedBody();
    body.on('hash', (hash: unknown) => resolve(String(hash)));
    body.on('error', reject);
    body.resume();
    for (const chunk of chunks) body.write(chunk);
    body.end();
  });
}

function nativeHash(chunks: Buffer[]): string {
  const hash = createHash('sha256');
  const hasher = new RelaxedBodyHasher(hash);
  for (const chunk of chunks) hasher.update(chunk);
  hasher.end();
  return hash.digest('base64');
}

// Bytes that matter to the canonicalisation, often; whole words, and any byte, now and then.
const piece = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(' ', '\t', '\r', '\n', '\r\n', 'a', '.', '  ', ' \r\n', '\r\r\n') },
  { weight: 2, arbitrary: fc.constantFrom('word', '\n\n\n', ' \t \t', '\x00', '\xa0', '\xff', '=20') },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }).map((byte) => String.fromCharCode(byte)) },
);
const body = fc
  .tuple(fc.array(piece, { maxLength: 200 }), fc.array(fc.nat({ max: 600 }), { maxLength: 6 }))
  .map(([pieces, cuts]) => splitAt(Buffer.from(pieces.join(''), 'latin1'), cuts));

test('the same body hash as nodemailer’s RelaxedBody for any body, in any chunks', async () => {
  await fc.assert(
    fc.asyncProperty(body, async (chunks) => {
      assert.is(nativeHash(chunks), await nodemailerHash(chunks));
    }),
    { numRuns: 10_000 },
  );
});

// Bodies that are mostly their own canonical form (CRLF, single spaces, no tab), which the hasher takes
// whole without canonicalising them (a body as nodemailer writes it), with now and then what is not.
const mostlyCanonical = fc
  .tuple(
    fc.array(
      fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom('word', ' word', '\r\n', '\r\n\r\n', '.', '\xe9', '\r', '=') },
        { weight: 1, arbitrary: fc.constantFrom('  ', ' \r\n', '\n', '\t', ' ') },
      ),
      { maxLength: 300 },
    ),
    fc.array(fc.nat({ max: 900 }), { maxLength: 4 }),
  )
  .map(([pieces, cuts]) => splitAt(Buffer.from(pieces.join(''), 'latin1'), cuts));

test('the same body hash as nodemailer’s RelaxedBody for bodies mostly canonical already', async () => {
  await fc.assert(
    fc.asyncProperty(mostlyCanonical, async (chunks) => {
      assert.is(nativeHash(chunks), await nodemailerHash(chunks));
    }),
    { numRuns: 5_000 },
  );
});

test('cases by hand: empty bodies, empty lines past the hashing slices, long whitespace runs', async () => {
  const cases = [
    '',
    '\r\n',
    '\n\n\n',
    ' \t ',
    'a',
    'a \r',
    'a\r',
    '\r',
    `${'\r\n'.repeat(10_000)}a${'\n'.repeat(9_000)}b${'\r\n'.repeat(5_000)}`,
    `a${' '.repeat(300_000)}b\r\n`,
    `${' \t'.repeat(150_000)}\r\n x`,
    `${'line of text  with  spaces \r\n'.repeat(5_000)}`,
    // Canonical already, with a space or a run of them at each place the look at every other byte can meet it.
    `${'line of text with spaces\r\n'.repeat(5_000)}\r\n\r\n`,
    'a  b\r\n',
    'ab  c\r\n',
    '  a\r\n',
    ' a\r\n',
    'a \r\n',
    'a \r\r\n',
    'a\r\n\n',
    '\na\r\n',
  ];
  for (const text of cases) {
    const data = Buffer.from(text, 'latin1');
    for (const chunks of [[data], [data.subarray(0, 7), data.subarray(7)]]) {
      assert.is(nativeHash(chunks), await nodemailerHash(chunks), JSON.stringify(text.slice(0, 40)));
    }
  }
  // Empty lines waiting across chunks, more than one slice of them.
  const split = [
    [`a\n${'\n'.repeat(10_000)}`, 'b'],
    ['\r\n'.repeat(9_000), '\r\n'.repeat(9_000), 'x\r\n'],
  ];
  for (const texts of split) {
    const chunks = texts.map((text) => Buffer.from(text, 'latin1'));
    assert.is(nativeHash(chunks), await nodemailerHash(chunks));
  }
});

test('installed in nodemailer’s signer: the same signed message, and restored', async () => {
  const message = fixedSignedMessage({
    text: 'Plain  text \n\n with\ttabs  \n\n\n',
    html: `<p>${'A long line of HTML with = signs, spaces at its end   \n'.repeat(500)}</p>\n\n`,
  });
  const signed = () => builtByNodemailer(message);
  const before = await signed();
  const installed = hashRelaxedBodyNatively();
  assert.is(hashRelaxedBodyNatively(), installed, 'installed once');
  try {
    assert.is(await signed(), before);
  } finally {
    installed.restore();
  }
  assert.is(await signed(), before);
});

test.run();
