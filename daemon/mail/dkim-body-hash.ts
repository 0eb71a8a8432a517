// DKIM's body hash (`bh=`) at native speed. nodemailer's signer streams the body through its
// RelaxedBody, whose updateHash canonicalises it (RFC 6376 §3.4.4, relaxed) one byte at a time in
// JavaScript before hashing: 1.0–1.4 ms of CPU for each 100 KB message of bench:mta. Here a chunk's
// whole lines are canonicalised by RegExp replaces over its bytes as a latin1 string (whitespace before
// a line end dropped, line ends made CRLF; runs of whitespace made one space) and hashed as they are:
// 0.3–0.4 ms, SHA-256 itself 0.06 (bench/compose-sign.ts). Only the empty lines at the end of what has
// been seen, and the bytes after its last line feed, wait for what follows. test/dkim-body-hash.test.ts
// checks the hash equals RelaxedBody's with fast-check.
//
// hashRelaxedBodyNatively() installs it as the updateHash of nodemailer's RelaxedBody class, the one
// place its signer computes `bh` (nodemailer has no option to give it a body hash), so every DKIM
// signature nodemailer makes in this thread uses it; everything else (the stream, the signature) stays
// nodemailer's. updateHash is internal to nodemailer: the install checks it is there and hashes like
// this on a sample body, and throws at startup (mail/transport.ts) if not, rather than sign wrongly.
import type { Hash } from 'node:crypto';
import RelaxedBody from 'nodemailer/lib/dkim/relaxed-body';
import { lineEndsOf } from './line-ends.ts';

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;

/**
 * Whitespace before a line end, and the line end (LF, or CRLF: the CR before an LF is not content),
 * become one CRLF. Matches start only where no whitespace precedes them, so a long run of whitespace
 * inside a line is tried once, not once from each of its characters.
 */
const WHITESPACE_AND_LINE_END = /(?<![ \t])[ \t]*\r?\n/g;
/** Without whitespace before line ends, line ends alone change: an LF without a CR before it becomes CRLF. */
const BARE_LF = /(?<!\r)\n/g;
/** A run of whitespace inside a line becomes one space. */
const WHITESPACE_RUN = /[ \t]{2,}|\t/g;
/**
 * A chunk is canonicalised in slices of this many bytes: each slice's text and its replaces stay small
 * strings, where a whole message's made strings past V8's largest regular object (128 KiB) for a larger
 * body (an attachment's): a 300 KB body hashed in 3.1–3.6 ms whole, 0.9–1.0 ms in slices; 100 KB, the same.
 */
const SLICE_BYTES = 16 * 1024;
/** Empty lines are hashed in slices of this many (a body may hold a great many of them). */
const EMPTY_LINES = '\r\n'.repeat(4096);

/**
 * Whether whole lines (`lines` ends in LF and starts a line) are their own relaxed canonical form: no
 * tab, no run of spaces, no space before a line end, and every LF after a CR (a CR elsewhere is content).
 * Buffer#indexOf finds one byte natively, but a needle of two (`'  '`) starting with a byte as common
 * as a space is tried at every space (0.13 ms for 100 KB): runs of spaces are found by looking at every
 * other byte instead (any two neighbours include one of them), line ends by a walk from LF to LF.
 */
function isCanonical(lines: Buffer): boolean {
  if (lines.includes(TAB)) return false;
  for (let lf = lines.indexOf(LF); lf !== -1; lf = lines.indexOf(LF, lf + 1)) {
    if (lf === 0 || lines[lf - 1] !== CR || (lf > 1 && lines[lf - 2] === SPACE)) return false;
  }
  const last = lines.length - 1;
  for (let at = 1; at < last; at += 2) {
    if (lines[at] === SPACE && (lines[at - 1] === SPACE || lines[at + 1] === SPACE)) return false;
  }
  return true;
}

/**
 * The relaxed canonical form of a body, hashed as it streams: RFC 6376 §3.4.4 as nodemailer's RelaxedBody
 * reads it (a bare LF ends a line, as CRLF does; a CR not before an LF is content; no empty lines at the
 * end; a body that does not end in a line end gets one).
 */
export class RelaxedBodyHasher {
  /** The bytes after the last line feed so far: a line not finished yet. */
  private unfinishedLine: Buffer[] = [];
  /** Empty lines not hashed yet: they belong to the body only if content follows them. */
  private pendingEmptyLines = 0;

  constructor(private readonly hash: Hash) {}

  update(chunk: Buffer): void {
    // Most bodies are canonical already (CRLF line ends, no tab, no run of spaces, no space before a line
    // end: what nodemailer and most clients write): their whole lines are hashed as they are, without a
    // latin1 string of them or a replace (four native searches and a walk from LF to LF).
    if (this.unfinishedLine.length === 0) {
      const lastLf = chunk.lastIndexOf(LF);
      if (lastLf !== -1 && isCanonical(chunk.subarray(0, lastLf + 1))) {
        this.hashLines(chunk.subarray(0, lastLf + 1));
        if (lastLf + 1 < chunk.length) this.unfinishedLine = [chunk.subarray(lastLf + 1)];
        return;
      }
    }
    for (let at = 0; at < chunk.length; at += SLICE_BYTES) this.updateSlice(chunk.subarray(at, at + SLICE_BYTES));
  }

  private hashPendingEmptyLines(): void {
    for (let left = this.pendingEmptyLines; left > 0; left -= EMPTY_LINES.length / 2) {
      this.hash.update(EMPTY_LINES.slice(0, Math.min(left, EMPTY_LINES.length / 2) * 2), 'latin1');
    }
  }

  private updateSlice(chunk: Buffer): void {
    const lastLf = chunk.lastIndexOf(LF);
    if (lastLf === -1) {
      if (chunk.length) this.unfinishedLine.push(chunk);
      return;
    }
    const lines = this.unfinishedLine.length
      ? Buffer.concat([...this.unfinishedLine, chunk.subarray(0, lastLf + 1)])
      : chunk.subarray(0, lastLf + 1);
    this.unfinishedLine = lastLf + 1 < chunk.length ? [chunk.subarray(lastLf + 1)] : [];
    const text = lines.toString('latin1');
    // Whitespace before a line end is rare in a MIME body (quoted-printable escapes it) and so is a bare
    // LF: one walk over the line ends (line-ends.ts) says which replace, if any, is needed.
    const ends = lineEndsOf(text);
    const canonicalEnds = ends.whitespaceBefore
      ? text.replace(WHITESPACE_AND_LINE_END, '\r\n')
      : ends.bareLf
        ? text.replace(BARE_LF, '\r\n')
        : text;
    this.hashLines(canonicalEnds.replace(WHITESPACE_RUN, ' '));
  }

  /** The end of the body: its last line, if it has content and no line end, is hashed with one. */
  end(): void {
    const last = Buffer.concat(this.unfinishedLine).toString('latin1');
    this.unfinishedLine = [];
    let end = last.length;
    while (end > 0 && (last.charCodeAt(end - 1) === SPACE || last.charCodeAt(end - 1) === TAB)) end--;
    if (end === 0) return;
    this.hashLines(`${last.slice(0, end).replace(WHITESPACE_RUN, ' ')}\r\n`);
  }

  /**
   * Canonical lines, each ending in CRLF (a latin1 string, or the bytes of lines that were canonical
   * already): hashed but for the empty lines at their end, which wait.
   */
  private hashLines(canonical: string | Buffer): void {
    const byteAt = typeof canonical === 'string' ? (i: number) => canonical.charCodeAt(i) : (i: number) => canonical[i];
    // A line is empty when the line before it ended right before its CRLF (content holds no LF).
    let end = canonical.length;
    let emptyAtEnd = 0;
    while (end > 0 && (end === 2 || byteAt(end - 3) === LF)) {
      end -= 2;
      emptyAtEnd++;
    }
    if (end === 0) {
      this.pendingEmptyLines += emptyAtEnd;
      return;
    }
    this.hashPendingEmptyLines();
    if (typeof canonical === 'string')
      this.hash.update(end === canonical.length ? canonical : canonical.slice(0, end), 'latin1');
    else this.hash.update(end === canonical.length ? canonical : canonical.subarray(0, end));
    this.pendingEmptyLines = emptyAtEnd;
  }
}

/** What of RelaxedBody's internals the install uses: its hash, the method it replaces, and its line state. */
interface RelaxedBodyInternals {
  bodyHash: Hash;
  updateHash(chunk: Buffer, final?: boolean): void;
  _flush(callback: () => void): void;
  _lineHasContent: boolean;
  nativeHasher?: RelaxedBodyHasher;
}

/**
 * RelaxedBody's updateHash(chunk, final), hashing with RelaxedBodyHasher. Its _flush calls it with
 * `final` and then adds a CRLF if `_lineHasContent`, which stays false here: end() adds that CRLF.
 */
function updateHashNatively(this: RelaxedBodyInternals, chunk: Buffer, final?: boolean): void {
  this.nativeHasher ??= new RelaxedBodyHasher(this.bodyHash);
  this.nativeHasher.update(chunk);
  if (final) this.nativeHasher.end();
}

/** A body with what the canonicalisation has to get right: whitespace at line ends, bare CR and LF, empty lines. */
const SAMPLE_BODY = Buffer.from(' a \t b \r\n\r\n\tc\r \n\n x\r\r\n\r\n \t\r\n y \r  z  \n\n\n\t', 'latin1');

function sampleHash(): string {
  let hash = '';
  const body = new RelaxedBody() as unknown as RelaxedBodyInternals & {
    once(event: 'hash', listener: (value: string) => void): void;
  };
  body.once('hash', (value) => (hash = value));
  body.updateHash(SAMPLE_BODY.subarray(0, 9));
  body.updateHash(SAMPLE_BODY.subarray(9));
  body._flush(() => undefined);
  return hash;
}

let installed: { restore(): void } | null = null;

/**
 * Makes nodemailer's DKIM signer hash bodies with RelaxedBodyHasher (see the top of this file). Once per
 * thread; later calls return the same handle. `restore()` puts nodemailer's own updateHash back (the
 * comparisons in tests and bench/compose-sign.ts).
 */
export function hashRelaxedBodyNatively(): { restore(): void } {
  if (installed) return installed;
  const prototype = RelaxedBody.prototype as unknown as RelaxedBodyInternals;
  const original = prototype.updateHash;
  if (typeof original !== 'function' || typeof prototype._flush !== 'function') {
    throw new Error(
      'nodemailer’s DKIM RelaxedBody has no updateHash or _flush: dkim-body-hash.ts cannot hash its bodies',
    );
  }
  const expected = sampleHash();
  prototype.updateHash = updateHashNatively;
  if (sampleHash() !== expected) {
    prototype.updateHash = original;
    throw new Error(
      'nodemailer’s DKIM RelaxedBody hashes a sample body differently from dkim-body-hash.ts: not installed',
    );
  }
  installed = {
    restore() {
      prototype.updateHash = original;
      installed = null;
    },
  };
  return installed;
}
