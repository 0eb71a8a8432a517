// Quoted-printable at native speed, byte for byte what nodemailer's encoder (nodemailer/lib/qp) writes
// for a text part. nodemailer escapes one byte at a time in JavaScript (encodeBytes) and wraps the
// result with regular expressions per output line: 0.9–1.5 ms of CPU for the 100 KB of bench:mta's
// message, the largest step of composing it. Here the escaping is RegExp replaces over the bytes (the
// engine skips the runs of characters written as they are) and the wrapping takes each line's window
// with indexOf and charCodeAt: 0.2 ms (bench/compose-sign.ts). The results are the same
// (test/quoted-printable.test.ts checks them against nodemailer's Encoder with fast-check).
//
// nodemailer's output depends on more than the bytes: its Encoder escapes and wraps the input in
// slices of 64 KiB, carrying the last unfinished line from one slice into the next, and it holds back
// the whitespace the input ends with until the end. A window of 76 characters can reach across a
// bare LF, so where a slice starts moves later soft line breaks. This does the same steps in the same
// slices, for one part given whole as mime-node gives a string part to its Encoder.

/** The Encoder's ENCODE_SLICE_SIZE: it escapes and wraps its input this many bytes at a time. */
const SLICE_BYTES = 64 * 1024;
/** nodemailer's default line length, and the margin it looks back in for a place to break (76 / 3). */
const LINE_LENGTH = 76;
const LINE_MARGIN = Math.floor(LINE_LENGTH / 3);

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const EQUALS = 0x3d;

/** `=XX` for each byte value, upper-case hex as nodemailer writes it. */
const ESCAPED = Array.from({ length: 256 }, (_, byte) => `=${byte.toString(16).toUpperCase().padStart(2, '0')}`);

/** Nothing to escape but `=` and whitespace before a line break: TAB, LF, CR and printable ASCII only. */
const PRINTABLE = /^[\t\n\r\x20-\x7e]*$/;
const UNPRINTABLE_RUNS = /[^\t\n\r\x20-\x7e]+/g;
/** A space or tab before a line break is escaped (the break is kept as it is). */
const WHITESPACE_BEFORE_BREAK = /[\t ][\r\n]/g;

function escapeRun(run: string): string {
  if (run.length === 1) return ESCAPED[run.charCodeAt(0)];
  let escaped = '';
  for (let index = 0; index < run.length; index++) escaped += ESCAPED[run.charCodeAt(index)];
  return escaped;
}

const escapeWhitespaceBeforeBreak = (pair: string) => ESCAPED[pair.charCodeAt(0)] + pair[1];

const isWhitespace = (code: number) => code === SPACE || code === TAB;

/**
 * nodemailer's encodeBytes in text mode: `bytes` is a latin1 string (one character per byte), `next`
 * the byte after it (undefined at the end of the input, which counts as a line break).
 */
function escapeSlice(bytes: string, next: number | undefined, printableAscii: boolean): string {
  let escaped = bytes.includes('=') ? bytes.replaceAll('=', '=3D') : bytes;
  // Escapes hold no whitespace and no line break: escaping one kind does not make work for the other.
  if (!printableAscii && !PRINTABLE.test(escaped)) escaped = escaped.replace(UNPRINTABLE_RUNS, escapeRun);
  escaped = escaped.replace(WHITESPACE_BEFORE_BREAK, escapeWhitespaceBeforeBreak);
  const last = bytes.charCodeAt(bytes.length - 1);
  if (isWhitespace(last) && (next === undefined || next === LF || next === CR)) {
    return escaped.slice(0, -1) + ESCAPED[last];
  }
  return escaped;
}

const isHexDigit = (code: number) =>
  (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x46) || (code >= 0x61 && code <= 0x66);

/** `/[=][\da-f]{2}$/i` on `text` from `start` to `end`: it ends with a whole escape. */
function endsWithEscape(text: string, start: number, end: number): boolean {
  return (
    end - start >= 3 &&
    text.charCodeAt(end - 3) === EQUALS &&
    isHexDigit(text.charCodeAt(end - 2)) &&
    isHexDigit(text.charCodeAt(end - 1))
  );
}

/** `/[=][\da-f]{0,1}$/i` on `text` from `start` to `end`: the length of an escape cut short at its end. */
function unfinishedEscapeLength(text: string, start: number, end: number): number {
  if (text.charCodeAt(end - 1) === EQUALS) return 1;
  if (end - start >= 2 && text.charCodeAt(end - 2) === EQUALS && isHexDigit(text.charCodeAt(end - 1))) return 2;
  return 0;
}

/** `/^(?:=[\da-f]{2}){1,4}$/i` on `text` from `start` to `end`: one to four escapes and nothing else. */
function isOnlyEscapes(text: string, start: number, end: number): boolean {
  const length = end - start;
  if (length === 0 || length > 12 || length % 3 !== 0) return false;
  for (let at = start + 3; at <= end; at += 3) {
    if (!endsWithEscape(text, at - 3, at)) return false;
  }
  return true;
}

/** The index of the last of ` \t.,!?` in `text` from `start` to `end`, or -1. */
function lastBreakPoint(text: string, start: number, end: number): number {
  for (let index = end - 1; index >= start; index--) {
    const code = text.charCodeAt(index);
    if (code === SPACE || code === TAB || code === 0x2e || code === 0x2c || code === 0x21 || code === 0x3f)
      return index;
  }
  return -1;
}

/**
 * nodemailer's qp `wrap(str, 76)`, step for step: each line is decided on the window of the next 76
 * characters (ending it after a CRLF in it, after a line feed near its end, after a space or
 * punctuation near its end, or before an escape it would cut), and a soft break (`=\r\n`) ends each line
 * that does not end the string or a line. `encoded` is the encoder's output, ASCII only.
 *
 * The wrapped text up to its last line feed is appended to `output` in pieces; the rest, the line the
 * Encoder keeps until it knows what follows, is returned.
 *
 * The window is never copied: the next CRLF, LF and CR are looked up with indexOf from where the
 * window (or its margin) starts and kept until the window passes them, so each search covers new
 * ground and the whole string is scanned a bounded number of times, however long its lines.
 */
function wrapLines(encoded: string, output: string[], softBreak: string): string {
  const length = encoded.length;
  if (length <= LINE_LENGTH) return unfinishedLine(encoded, output);
  let pos = 0;
  // The first CRLF at or after `pos`, LF at or after the margin's start, CR at or after `pos`
  // (-1: none left; -2: not looked up yet).
  let nextCrlf = -2;
  let nextLf = -2;
  let nextCr = -2;
  while (pos < length) {
    const windowEnd = Math.min(pos + LINE_LENGTH, length);
    if (nextCrlf !== -1 && nextCrlf < pos) nextCrlf = encoded.indexOf('\r\n', pos);
    if (nextCrlf !== -1 && nextCrlf + 2 <= windowEnd) {
      output.push(encoded.slice(pos, nextCrlf + 2));
      pos = nextCrlf + 2;
      continue;
    }
    if (encoded.charCodeAt(windowEnd - 1) === LF) {
      output.push(encoded.slice(pos, windowEnd));
      pos = windowEnd;
      continue;
    }
    // `/\n.*?$/` on the window's last LINE_MARGIN characters: a line feed there with no CR after it.
    const marginStart = Math.max(pos, windowEnd - LINE_MARGIN);
    if (nextLf !== -1 && nextLf < marginStart) nextLf = encoded.indexOf('\n', marginStart);
    if (nextLf !== -1 && nextLf < windowEnd) {
      const lastLf = encoded.lastIndexOf('\n', windowEnd - 1);
      if (nextCr !== -1 && nextCr < pos) nextCr = encoded.indexOf('\r', pos);
      const crAfter = nextCr !== -1 && nextCr < windowEnd && encoded.slice(lastLf, windowEnd).includes('\r');
      if (!crAfter) {
        output.push(encoded.slice(pos, lastLf + 1));
        pos = lastLf + 1;
        continue;
      }
    }
    let lineEnd = windowEnd;
    const breakPoint =
      windowEnd - pos > LINE_LENGTH - LINE_MARGIN ? lastBreakPoint(encoded, marginStart, windowEnd) : -1;
    if (breakPoint !== -1) {
      lineEnd = breakPoint + 1;
    } else if (unfinishedEscapeLength(encoded, pos, lineEnd) > 0 || endsWithEscape(encoded, pos, lineEnd)) {
      lineEnd -= unfinishedEscapeLength(encoded, pos, lineEnd);
      // A UTF-8 sequence is not split: escapes of continuation bytes go to the next line with their lead.
      while (
        lineEnd - pos > 3 &&
        lineEnd < length &&
        !isOnlyEscapes(encoded, pos, lineEnd) &&
        endsWithEscape(encoded, pos, lineEnd)
      ) {
        const code = parseInt(encoded.slice(lineEnd - 2, lineEnd), 16);
        if (code < 0x80) break;
        lineEnd -= 3;
        if (code >= 0xc0) break;
      }
    }
    if (lineEnd === pos) lineEnd = windowEnd;
    if (lineEnd === length) return unfinishedLine(encoded.slice(pos), output);
    if (encoded.charCodeAt(lineEnd - 1) !== LF) {
      if (lineEnd - pos === LINE_LENGTH) lineEnd -= endsWithEscape(encoded, pos, lineEnd) ? 3 : 1;
      output.push(encoded.slice(pos, lineEnd), softBreak);
    } else {
      output.push(encoded.slice(pos, lineEnd));
    }
    pos = lineEnd;
  }
  return '';
}

/** Appends `last` up to its last line feed to `output`, and returns what follows it. */
function unfinishedLine(last: string, output: string[]): string {
  const lastLf = last.lastIndexOf('\n');
  if (lastLf !== -1) output.push(last.slice(0, lastLf + 1));
  return last.slice(lastLf + 1);
}

/** An LF that no CR precedes. */
const BARE_LF = /(?<!\r)\n/g;

/**
 * The quoted-printable body of a text part whose content is `text`, as nodemailer's Encoder (text
 * mode, 76-character lines) writes it when mime-node hands it the part's content in one chunk.
 * `printableAscii`: the caller has checked that `text` is TAB, LF, CR and printable ASCII only
 * (encoded-parts.ts does, for its own decision), so it is not scanned for anything else again.
 * `crlfLineEnds`: every LF that no CR precedes is written CRLF, as the message goes out (nodemailer's
 * `newline: 'windows'`, line-ends.ts): the Encoder keeps a text's own line ends, so a body written
 * with LF would have every hard line break rewritten twice per message downstream, by the DKIM body
 * hash (relaxed canonicalisation reads a bare LF as a line end) and by the CRLF pass over the built
 * message. Wrapping is decided on the text as the Encoder sees it; only the line ends written change.
 */
export function encodeQuotedPrintable(text: string, printableAscii = false, crlfLineEnds = false): string {
  // ASCII is its own UTF-8: only other text is converted (byteLength is a native count).
  const bytes =
    printableAscii || Buffer.byteLength(text, 'utf8') === text.length
      ? text
      : Buffer.from(text, 'utf8').toString('latin1');
  // Without a CR in the text, the only CRs written are the soft breaks': written `=\n` here, every LF
  // then becomes CRLF by a plain string replace rather than a RegExp with a lookbehind at each LF.
  const noCr = crlfLineEnds && !bytes.includes('\r');
  const softBreak = noCr ? '=\n' : '=\r\n';
  // The Encoder holds back the whitespace its input ends with (unless there is more than a slice of
  // it) and encodes it last, as a slice of its own.
  let end = bytes.length;
  while (end > 0 && isWhitespace(bytes.charCodeAt(end - 1))) end--;
  const heldBack = bytes.length - end <= SLICE_BYTES ? bytes.slice(end) : '';
  const body = heldBack ? bytes.slice(0, end) : bytes;
  const output: string[] = [];
  let lastLine = '';
  for (const input of [body, heldBack]) {
    for (let start = 0; start < input.length; start += SLICE_BYTES) {
      const sliceEnd = Math.min(start + SLICE_BYTES, input.length);
      const next = sliceEnd < input.length ? input.charCodeAt(sliceEnd) : undefined;
      // The last line waits for the next slice: whether it needs a soft break is known then.
      lastLine = wrapLines(
        lastLine + escapeSlice(input.slice(start, sliceEnd), next, printableAscii),
        output,
        softBreak,
      );
    }
  }
  output.push(lastLine);
  const encoded = output.join('');
  if (!crlfLineEnds) return encoded;
  return noCr ? encoded.replaceAll('\n', '\r\n') : encoded.replace(BARE_LF, '\r\n');
}
