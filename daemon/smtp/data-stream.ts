// smtp-server's DATA reader at native speed. Its SMTPStream finds the lines that start with a dot (the
// end of the message, or a dot-stuffing escape to drop) by reading every byte of the message in
// JavaScript: 0.3–0.4 ms of the SMTP edge's CPU for each 100 KB submission of bench:mta (docs/smtp.md).
// Here the same method looks for "\n." with Buffer#indexOf, which searches natively, and does at each
// hit exactly what smtp-server does; every other line of it is smtp-server 3.21's _feedDataStream as
// written (its guard against a terminator smuggled across chunks included).
//
// installFastDataStream() replaces _feedDataStream on smtp-server's SMTPStream prototype, so every
// SMTP server of this process uses it (submission and inbound). The method is internal to smtp-server:
// the install checks it is there and that the replacement gives the same data and the same end of
// DATA as the original on sample inputs cut into every pair of chunks, and throws if not, rather than
// read messages wrongly.
import { SMTPStream } from 'smtp-server/lib/smtp-stream.js';
import type { PassThrough } from 'node:stream';

type Done = (error?: Error | null) => void;

/** What of SMTPStream's internals the method reads and writes. */
interface StreamInternals {
  _dataStream: PassThrough;
  _lastBytes: Buffer | false;
  _atDataStart: boolean;
  _feedDataStream(chunk: Buffer, done: Done): void;
  _countDataBytes(length: number): void;
  _endDataMode(chunk: Buffer | false, remainder: Buffer, done: Done): void;
}

const END_SEQUENCE = Buffer.from('\r\n.\r\n');
const DOT_LINE_START = Buffer.from('\n.');
const TERMINATOR_FIRST = Buffer.from('.\r\n');

/** smtp-server's _feedDataStream, the byte loop replaced by a search for "\n." (see the top of the file). */
function feedDataStream(this: StreamInternals, given: Buffer, done: Done): void {
  const dataStream = this._dataStream;
  let chunk = given;
  if (this._lastBytes && this._lastBytes.length) {
    chunk = Buffer.concat([this._lastBytes, chunk], this._lastBytes.length + chunk.length);
    this._lastBytes = false;
  }
  let len = chunk.length;
  // A DATA that starts with the terminator ends at once (only before any payload byte is consumed).
  if (this._atDataStart && len >= 3 && Buffer.compare(chunk.subarray(0, 3), TERMINATOR_FIRST) === 0) {
    this._endDataMode(false, chunk.subarray(3), done);
    return;
  }
  if (this._atDataStart && len >= 2 && chunk[0] === 0x2e && chunk[1] === 0x2e) {
    chunk = chunk.subarray(1);
    len--;
    this._atDataStart = false;
  }
  // smtp-server tries i = 2 … len - 3 for a dot after an LF: the LF at i - 1 = 1 … len - 4.
  for (
    let lf = chunk.indexOf(DOT_LINE_START, 1);
    lf !== -1 && lf + 1 < len - 2;
    lf = chunk.indexOf(DOT_LINE_START, lf + 1)
  ) {
    const i = lf + 1;
    if (Buffer.compare(chunk.subarray(i - 2, i + 3), END_SEQUENCE) === 0) {
      const buf = chunk.subarray(0, i);
      this._countDataBytes(buf.length);
      this._endDataMode(buf, chunk.subarray(i + 3), done);
      return;
    }
    if (chunk[i + 1] === 0x2e) {
      const buf = chunk.subarray(0, i);
      this._lastBytes = false;
      this._countDataBytes(buf.length);
      if (dataStream.writable) dataStream.write(buf);
      const rest = chunk.subarray(i + 1);
      setImmediate(() => this._feedDataStream(rest, done));
      return;
    }
  }
  this._lastBytes = chunk.length < 4 ? chunk : chunk.subarray(chunk.length - 4);
  if (this._lastBytes.length < chunk.length) {
    const buf = chunk.subarray(0, chunk.length - this._lastBytes.length);
    this._countDataBytes(buf.length);
    if (dataStream.writable) {
      const handled = dataStream.write(buf);
      if (!handled && !dataStream.destroyed) {
        const onDrain = () => {
          dataStream.removeListener('drain', onDrain);
          dataStream.removeListener('close', onDrain);
          done();
        };
        dataStream.once('drain', onDrain);
        dataStream.once('close', onDrain);
      } else done();
    } else done();
  } else done();
}

/**
 * What a DATA phase fed `chunks` gives through SMTPStream's method as it is now: the message's bytes, and
 * what follows its end (null: not ended). The install's check, and test/smtp-data-stream.test.ts.
 */
export function readData(chunks: Buffer[]): Promise<{ data: string; after: string | null }> {
  const stream = new SMTPStream();
  const received: Buffer[] = [];
  let after: string | null = null;
  const internals = stream as unknown as StreamInternals & { _endDataMode: StreamInternals['_endDataMode'] };
  const endDataMode = internals._endDataMode.bind(stream);
  internals._endDataMode = (chunk, remainder, done) => {
    after = remainder.toString('latin1');
    // The rest would be read as commands; the sample stops here.
    endDataMode(chunk, Buffer.alloc(0), done);
  };
  const data = stream.startDataMode(1024);
  data.on('data', (chunk: Buffer) => received.push(chunk));
  return new Promise((resolve, reject) => {
    data.once('end', () => resolve({ data: Buffer.concat(received).toString('latin1'), after }));
    data.once('error', reject);
    let index = 0;
    const next = () => {
      if (index === chunks.length) {
        if (after === null) resolve({ data: Buffer.concat(received).toString('latin1'), after });
        return;
      }
      internals._feedDataStream(chunks[index++], next);
    };
    next();
  });
}

/** DATA phases with what the scan has to get right: escapes, the terminator at a chunk's edge, a lone dot at the start. */
const SAMPLES = [
  'a\r\n..b\r\n.\r\n',
  '..\r\n.\r\nQUIT\r\n',
  '.\r\nNOOP\r\n',
  'x\r\n.y\r\n..\r\n...z\r\n\r\n.\r\nRSET\r\n',
  'no end\r\n.x',
  '\n.\r\n.\r\n',
];

async function sampleResults(): Promise<string> {
  const results: unknown[] = [];
  for (const sample of SAMPLES) {
    const bytes = Buffer.from(sample, 'latin1');
    for (let cut = 0; cut <= bytes.length; cut++) {
      results.push(await readData([bytes.subarray(0, cut), bytes.subarray(cut)].filter((b) => b.length > 0)));
    }
  }
  return JSON.stringify(results);
}

let installed: Promise<{ restore(): void }> | null = null;

/**
 * Makes smtp-server's SMTPStream read DATA with feedDataStream (see the top of this file). Once per
 * process; later calls answer the same handle. `restore()` puts smtp-server's own method back (tests).
 */
export function installFastDataStream(): Promise<{ restore(): void }> {
  installed ??= (async () => {
    const prototype = SMTPStream.prototype as unknown as StreamInternals;
    const original = prototype._feedDataStream;
    if (typeof original !== 'function' || typeof prototype._endDataMode !== 'function') {
      throw new Error(
        'smtp-server’s SMTPStream has no _feedDataStream or _endDataMode: data-stream.ts cannot replace it',
      );
    }
    const expected = await sampleResults();
    prototype._feedDataStream = feedDataStream;
    if ((await sampleResults()) !== expected) {
      prototype._feedDataStream = original;
      throw new Error('smtp-server’s SMTPStream reads sample DATA differently from data-stream.ts: not installed');
    }
    return {
      restore() {
        prototype._feedDataStream = original;
        installed = null;
      },
    };
  })();
  return installed;
}
