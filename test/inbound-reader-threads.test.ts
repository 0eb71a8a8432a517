// Issue 52 §5: the inbound listener's reader threads (INBOUND_READER_THREADS, inbound-mail/reader.ts).
// One thread capped the listener near 200 messages a second however idle the other core was; several
// share one queue, each reading one message at a time. The setting refuses what would do nothing or
// too much; each message's answer is its own whichever thread read it; a thread that ends is replaced
// alone. Messages are read for real (verdicts against the test DNS server), threads counted by the
// process's `worker` event.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import { ConfigError, loadConfig } from '../daemon/config.ts';
import { createInboundReader, ownedChunk, type InboundReader } from '../daemon/modules/inbound-mail/reader.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { routedReadWanted } from './helpers/reader-wanted.ts';

let dns: TestDnsServer;
const readers: InboundReader[] = [];
/** Every Worker this process starts from now on, in order. */
const started: Worker[] = [];
const onWorker = (worker: Worker) => started.push(worker);
/** Node emits `worker` on the next tick after a Worker is made. */
const tick = () => new Promise((resolve) => setImmediate(resolve));

test.before(async () => {
  dns = await startDnsServer();
  dns.zone.txt.set('sender.test', ['v=spf1 ip4:192.0.2.10 -all']);
  process.on('worker', onWorker);
});
test.after(async () => {
  process.off('worker', onWorker);
  await Promise.all(readers.map((reader) => reader.close()));
  await dns?.close();
});

const wanted = () => routedReadWanted(dns.address, { heloName: 'mail.sender.test', mailFrom: 'alice@sender.test' });

async function message(subject: string): Promise<Buffer> {
  const build = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const info = await build.sendMail({
    from: 'alice@sender.test',
    to: 'support@acme.test',
    subject,
    text: `Body of ${subject}`,
    attachments: [{ filename: `${subject}.txt`, content: `attachment of ${subject}` }],
  });
  return info.message as Buffer;
}

/** Reads `count` messages at once; each answer's subject, text and attachment, in the order asked. */
async function readAtOnce(reader: InboundReader, count: number, tag: string) {
  const raws = await Promise.all(Array.from({ length: count }, (_, i) => message(`${tag}-${i}`)));
  const reads = await Promise.all(raws.map((raw) => reader.read([ownedChunk(raw)], wanted())));
  return reads.map((read) => ({
    subject: read.routed!.parsed.subject,
    text: read.routed!.parsed.text.trim(),
    attachment: Buffer.from(read.routed!.attachments[0].content).toString(),
    spf: read.routed!.parsed.auth.spf.result,
  }));
}

/** A reader of `threads` threads, started (and closed after the file). */
function startedReader(threads: number): InboundReader {
  const reader = createInboundReader({ threads });
  readers.push(reader);
  reader.start();
  return reader;
}

const expected = (count: number, tag: string) =>
  Array.from({ length: count }, (_, i) => ({
    subject: `${tag}-${i}`,
    text: `Body of ${tag}-${i}`,
    attachment: `attachment of ${tag}-${i}`,
    spf: 'pass',
  }));

test('INBOUND_READER_THREADS: one per core up to 4 by default, 1–16 when set, anything else refused', () => {
  assert.is(loadConfig({}).inboundReaderThreads, Math.min(availableParallelism(), 4));
  assert.is(loadConfig({ INBOUND_READER_THREADS: '1' }).inboundReaderThreads, 1);
  assert.is(loadConfig({ INBOUND_READER_THREADS: '16' }).inboundReaderThreads, 16);
  for (const bad of ['0', '17', 'two', '-1', '1.5'])
    assert.throws(
      () => loadConfig({ INBOUND_READER_THREADS: bad }),
      (error: unknown) => error instanceof ConfigError && /INBOUND_READER_THREADS/.test((error as Error).message),
      bad,
    );
});

test('three threads start at once, and eight messages read at the same time each get their own answer', async () => {
  const before = started.length;
  const reader = startedReader(3);
  await tick();
  assert.is(started.length - before, 3);
  assert.equal(await readAtOnce(reader, 8, 'three'), expected(8, 'three'));
  // No thread more than the three: the queue waits for them rather than starting others.
  assert.is(started.length - before, 3);
});

test('a thread that ends is replaced alone, and the reads go on', async () => {
  const before = started.length;
  const reader = startedReader(2);
  await tick();
  const [first, second] = started.slice(before);
  assert.ok(first && second);
  await readAtOnce(reader, 2, 'warm');
  await first.terminate();
  assert.equal(await readAtOnce(reader, 4, 'after'), expected(4, 'after'));
  await tick();
  // One replacement, for the thread that ended; the other one kept reading.
  assert.is(started.length - before, 3);
  assert.is(second.threadId > 0, true);
});

test('one thread when told so: the messages wait for it in turn', async () => {
  const before = started.length;
  const reader = startedReader(1);
  assert.equal(await readAtOnce(reader, 3, 'one'), expected(3, 'one'));
  assert.is(started.length - before, 1);
});

test.run();
