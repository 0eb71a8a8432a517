// SMTP DATA escaping at native speed. nodemailer's DataStream (smtp-connection/data-stream.js) makes
// line ends CRLF and stuffs a dot at the start of a line, one byte at a time in JavaScript: 2.9 ms of
// every 100 KB message, a fifth of the MTA thread's time in bench:mta's CPU profile. This does the
// same with Buffer.indexOf (memchr) from one line end to the next, and SmtpSession installs it as the
// `_transform` of the DataStream nodemailer creates for each message (everything else — the final
// dot, the byte counts, the pipe to the socket — stays nodemailer's). test/mta-data-stream.test.ts
// checks the output is byte for byte DataStream's on generated input.
import type { TransformCallback } from 'node:stream';

const CR = 0x0d;
const LF = 0x0a;
const DOT = 0x2e;
const INSERT_LF = Buffer.from('\n');
const INSERT_LF_DOT = Buffer.from('\n.');
const INSERT_CR = Buffer.from('\r');
const INSERT_DOT = Buffer.from('.');

/** DataStream's state: the last byte seen (false before the first) and the counts it reports. */
export interface DataStreamState {
  lastByte: number | false;
  inByteCount: number;
  outByteCount: number;
  push(chunk: Buffer): boolean;
}

/** What DataStream inserts before the byte at `index` of `chunk`, after `prev`; null when nothing. */
function insertBefore(chunk: Buffer, index: number, prev: number | false): Buffer | null {
  const byte = chunk[index];
  if (prev === CR && byte !== LF) return byte === DOT ? INSERT_LF_DOT : INSERT_LF;
  if (byte === LF && prev !== CR) return INSERT_CR;
  if (byte === DOT && (prev === LF || prev === false)) return INSERT_DOT;
  return null;
}

/** Escapes one chunk as DataStream's _transform does; `this` is the DataStream. */
export function escapeDataChunk(
  this: DataStreamState,
  input: Buffer | string,
  _encoding: BufferEncoding,
  done: TransformCallback,
): void {
  if (!input || !input.length) return done();
  const chunk = typeof input === 'string' ? Buffer.from(input) : input;
  this.inByteCount += chunk.length;
  const parts: Buffer[] = [];
  let length = 0;
  let copiedTo = 0;
  const insert = (index: number, bytes: Buffer) => {
    if (index > copiedTo) {
      parts.push(chunk.subarray(copiedTo, index));
      length += index - copiedTo;
    }
    parts.push(bytes);
    length += bytes.length;
    copiedTo = index;
  };
  // Only a byte right after a CR or an LF (or the chunk's first) can need an insert before it, and an
  // LF itself (when no CR precedes it): visit those, jumping between line ends with indexOf.
  const first = insertBefore(chunk, 0, this.lastByte);
  if (first) insert(0, first);
  let nextCr = chunk.indexOf(CR);
  let nextLf = chunk.indexOf(LF);
  while (nextCr !== -1 || nextLf !== -1) {
    const at = nextCr === -1 ? nextLf : nextLf === -1 ? nextCr : Math.min(nextCr, nextLf);
    if (at > 0 && chunk[at] === LF) {
      const bytes = insertBefore(chunk, at, chunk[at - 1]);
      if (bytes) insert(at, bytes);
    }
    if (at + 1 < chunk.length) {
      const bytes = insertBefore(chunk, at + 1, chunk[at]);
      // A CR or LF after this one is visited in its own turn (its insert is decided there).
      if (bytes && chunk[at + 1] !== LF) insert(at + 1, bytes);
    }
    if (at === nextCr) nextCr = chunk.indexOf(CR, at + 1);
    if (at === nextLf) nextLf = chunk.indexOf(LF, at + 1);
  }
  if (parts.length > 0) {
    if (copiedTo < chunk.length) {
      parts.push(chunk.subarray(copiedTo));
      length += chunk.length - copiedTo;
    }
    this.outByteCount += length;
    this.push(Buffer.concat(parts, length));
  } else {
    this.outByteCount += chunk.length;
    this.push(chunk);
  }
  this.lastByte = chunk[chunk.length - 1];
  done();
}
