// The MTA's DATA escaping (daemon/mta/data-stream.ts) against nodemailer's DataStream, the code it
// stands in for: byte for byte the same output and counts, on generated input split at random points.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import DataStream from 'nodemailer/lib/smtp-connection/data-stream';
import { escapeDataChunk } from '../daemon/mta/data-stream.ts';
import { chunkedBytes } from './helpers/chunks.ts';

async function run(chunks: Buffer[], fast: boolean): Promise<{ out: Buffer; inCount: number; outCount: number }> {
  const stream = new DataStream() as DataStream & { inByteCount: number; outByteCount: number };
  if (fast) (stream as unknown as { _transform: typeof escapeDataChunk })._transform = escapeDataChunk;
  const out: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await ended;
  return { out: Buffer.concat(out), inCount: stream.inByteCount, outCount: stream.outByteCount };
}

// Bytes that matter to the escaping, often, and others now and then.
const byte = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(0x0d, 0x0a, 0x2e) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 255 }) },
);
const message = chunkedBytes(byte, 200);

test('the same bytes and counts as nodemailer’s DataStream on any input, in any chunks', async () => {
  await fc.assert(
    fc.asyncProperty(message, async (chunks) => {
      const [expected, actual] = await Promise.all([run(chunks, false), run(chunks, true)]);
      assert.is(actual.out.toString('latin1'), expected.out.toString('latin1'));
      assert.is(actual.inCount, expected.inCount);
      assert.is(actual.outCount, expected.outCount);
    }),
    { numRuns: 3_000 },
  );
});

test('cases by hand: bare CR and LF become CRLF, dots at line starts are doubled, the end is CRLF.CRLF', async () => {
  const cases: [string, string][] = [
    ['.a\r\n.b\r\n', '..a\r\n..b\r\n.\r\n'],
    ['a\nb\rc', 'a\r\nb\r\nc\r\n.\r\n'],
    ['a\r.b', 'a\r\n..b\r\n.\r\n'],
    ['x\r\n', 'x\r\n.\r\n'],
  ];
  for (const [input, escaped] of cases) {
    const { out } = await run([Buffer.from(input)], true);
    assert.is(out.toString('latin1'), escaped, JSON.stringify(input));
  }
});

test.run();
