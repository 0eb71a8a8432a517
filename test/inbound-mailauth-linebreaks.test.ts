// Issue 52 §5: the reader threads replace mailauth's line-break pass (MessageParser.ensureLinebreaks,
// the DKIM verifier's first walk over every byte) with one that jumps from line feed to line feed
// (inbound-mail/mailauth-load.ts). The verdicts must stay exactly mailauth's: the replacement yields
// the same buffers, chunk by chunk, as the original on messages of bare LFs, CRLFs, lone CRs and the
// `\r\n\n` quirk split at every kind of boundary; and through the reader thread a signed message whose
// lines end in bare LFs still passes DKIM while the same message with one body byte changed fails on
// its body hash.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createRequire } from 'node:module';
import nodemailer from 'nodemailer';
import { ensureLinebreaks } from '../daemon/modules/inbound-mail/mailauth-load.ts';
import { createInboundReader, ownedChunk, type InboundReader } from '../daemon/modules/inbound-mail/reader.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { routedReadWanted } from './helpers/reader-wanted.ts';
import { publishedDkimKey } from './helpers/dkim-verify.ts';

type Pass = (this: { lastByte?: number }, input: Buffer) => Generator<Buffer>;
// This process never installs the replacement: the prototype still holds mailauth's own.
const { MessageParser } = createRequire(import.meta.url)('mailauth/lib/dkim/message-parser') as {
  MessageParser: { prototype: { ensureLinebreaks: Pass } };
};
const original = MessageParser.prototype.ensureLinebreaks;

/** What a pass yields for the chunks of one message, in order, and the state it leaves. */
function run(pass: Pass, chunks: Buffer[]): { yielded: string[]; lastByte: number | undefined } {
  const state: { lastByte?: number } = {};
  const yielded: string[] = [];
  for (const chunk of chunks) for (const piece of pass.call(state, chunk)) yielded.push(piece.toString('latin1'));
  return { yielded, lastByte: state.lastByte };
}

/** A deterministic pseudo-random sequence (the cases are the same on every run). */
function generator(seed: number) {
  let x = seed;
  return (n: number) => {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    return x % n;
  };
}

test('the replacement is not mailauth’s own here, and yields what it yields on hand-picked messages', () => {
  assert.is.not(original, ensureLinebreaks);
  const cases: string[][] = [
    ['a\nb\n'],
    ['a\r\nb\r\n'],
    ['\n'],
    ['\n\n\n'],
    ['a\r\n\nb'],
    ['a\r', '\nb'],
    ['a', '\n', '\n', 'b\r', '\r\n'],
    ['header: x\n\nbody\n.\n'],
    ['no line break at all'],
    ['\r\r\n\n\r\n'],
    ['x\n', '', 'y'],
  ];
  for (const chunks of cases) {
    const buffers = chunks.map((chunk) => Buffer.from(chunk, 'latin1'));
    assert.equal(run(ensureLinebreaks, buffers), run(original, buffers), JSON.stringify(chunks));
  }
});

test('the same buffers as mailauth’s on 3,000 random messages cut at random places', () => {
  const random = generator(52);
  const alphabet = ['\n', '\r', ' ', '\t', 'a', 'b', '=', '\r\n', '\n\n'];
  for (let n = 0; n < 3_000; n++) {
    const text = Array.from({ length: 1 + random(120) }, () => alphabet[random(alphabet.length)]).join('');
    const bytes = Buffer.from(text, 'latin1');
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length;) {
      const size = 1 + random(Math.min(20, bytes.length - at));
      chunks.push(bytes.subarray(at, at + size));
      at += size;
    }
    assert.equal(run(ensureLinebreaks, chunks), run(original, chunks), JSON.stringify(text));
  }
});

let dns: TestDnsServer;
let reader: InboundReader;
test.before(async () => {
  dns = await startDnsServer();
  dns.zone.txt.set('lf.test', ['v=spf1 ip4:192.0.2.10 -all']);
  reader = createInboundReader();
});
test.after(async () => {
  await reader?.close();
  await dns?.close();
});

test('through the reader: a signed message with bare-LF lines passes DKIM, one body byte changed fails its body hash', async () => {
  const privateKey = publishedDkimKey(dns.zone, 'lf.test', 's1');
  const build = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const info = await build.sendMail({
    from: 'ann@lf.test',
    to: 'support@acme.test',
    subject: 'bare line feeds',
    text: 'First line.\nSecond  line with  spaces.\n\n\nLast line.\n',
    attachments: [{ filename: 'a.txt', content: 'attached\n'.repeat(50) }],
    dkim: { domainName: 'lf.test', keySelector: 's1', privateKey },
  });
  const crlf = (info.message as Buffer).toString('latin1');
  const bareLf = crlf.replace(/\r\n/g, '\n');
  assert.ok(!bareLf.includes('\r'));
  const dkim = async (raw: string) => {
    const read = await reader.read(
      [ownedChunk(Buffer.from(raw, 'latin1'))],
      routedReadWanted(dns.address, { heloName: 'mail.lf.test', mailFrom: 'ann@lf.test' }),
    );
    return read.routed!.parsed.auth.dkim;
  };
  assert.is((await dkim(crlf)).result, 'pass');
  assert.is((await dkim(bareLf)).result, 'pass');
  const tampered = await dkim(bareLf.replace('Last line.', 'Last line!'));
  assert.is.not(tampered.result, 'pass');
  assert.is(tampered.signatures[0].result, 'neutral');
  assert.match(tampered.signatures[0].comment ?? '', /body hash did not verify/);
});

test.run();
