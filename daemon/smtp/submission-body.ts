// The text and HTML of a submitted message read straight from its bytes, for the shapes nearly every
// application sends: one text/plain or text/html part, or a multipart/alternative of such parts, in
// UTF-8 or US-ASCII, 7bit/8bit, quoted-printable or base64. mailparser streams every body through a
// chain of transforms with an event-loop turn per chunk: on bench:mta's 100 KB message it was ~40 %
// of the SMTP edge's CPU and most of its garbage (docs/smtp.md "Performance"). For these shapes the
// answer is exactly mailparser's (test/smtp-submission-body.test.ts compares both on a corpus);
// anything else (attachments, nested multiparts, other charsets, format=flowed, a part without a
// Content-Type, malformed base64 …) answers null and the caller parses the whole message with
// mailparser as before.

export interface SimpleBody {
  /** As mailparser's `text` and `html` with skipHtmlToText and skipTextToHtml: undefined when absent. */
  text: string | undefined;
  html: string | undefined;
}

/** A Content-Type value and the parameters this reader needs, lower-cased names. */
interface ContentType {
  value: string;
  params: Map<string, string>;
}

/** A header field's value after its colon, unfolded and trimmed (`Name: a\r\n b` → `a b`). */
export function headerValue(field: string): string {
  return field
    .slice(field.indexOf(':') + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim();
}

/** `type/sub; name=value; name="quoted value"` (RFC 2045 §5.1); null when it does not read plainly. */
export function readContentType(header: string | undefined): ContentType | null {
  if (header === undefined) return null;
  const [value, ...rest] = header.split(';');
  const params = new Map<string, string>();
  for (const part of rest) {
    if (part.trim() === '') continue;
    const equals = part.indexOf('=');
    if (equals === -1) return null;
    const name = part.slice(0, equals).trim().toLowerCase();
    let raw = part.slice(equals + 1).trim();
    // RFC 2231 continuations and charsets (name*=, name*0=) are mailparser's to read.
    if (name.includes('*')) return null;
    if (raw.startsWith('"')) {
      if (!raw.endsWith('"') || raw.length < 2 || raw.slice(1, -1).includes('"')) return null;
      raw = raw.slice(1, -1);
    }
    params.set(name, raw);
  }
  return { value: value.trim().toLowerCase(), params };
}

/** Header fields of a part: lower-cased names, unfolded values; null on a line that is no field. */
export function readPartHeaders(block: string): Map<string, string> | null {
  const fields = new Map<string, string>();
  for (const field of block.split(/\r?\n(?![ \t])/)) {
    if (field === '') continue;
    const colon = field.indexOf(':');
    if (colon <= 0) return null;
    const name = field.slice(0, colon).trim().toLowerCase();
    // A field given twice is mailparser's to reconcile.
    if (fields.has(name)) return null;
    fields.set(name, headerValue(field));
  }
  return fields;
}

const hexValue = (code: number) =>
  code >= 48 && code <= 57
    ? code - 48
    : code >= 65 && code <= 70
      ? code - 55
      : code >= 97 && code <= 102
        ? code - 87
        : -1;

const SPACE = 32;
const TAB = 9;
const CR = 13;
const LF = 10;
const EQUALS = 61;

/** Whether every CR of `body` starts a CRLF (then the decoder may go line by line). */
function onlyCrlf(body: Buffer): boolean {
  for (let at = body.indexOf(CR); at !== -1; at = body.indexOf(CR, at + 2)) if (body[at + 1] !== LF) return false;
  return true;
}

const isBlank = (byte: number) => byte === SPACE || byte === TAB;

/**
 * libqp's first pass (spaces and tabs before a line break or the end dropped, then soft breaks
 * removed) line by line, for bodies whose CRs all start a CRLF. The body is copied whole once, then the
 * bytes kept are moved down in runs from one cut (a soft break, whitespace before a line end) to the
 * next with copyWithin, V8's own: a Buffer#copy per run cost ~0.1 µs a call through Node's binding, and
 * a 100 KB body of long lines has a soft break on half of its ~2,300 lines (0.14 → 0.09 ms).
 */
function joinLines(body: Buffer, joined: Buffer): number {
  body.copy(joined, 0);
  let size = 0;
  // The first byte kept that is not moved yet.
  let kept = 0;
  const move = (end: number) => {
    joined.copyWithin(size, kept, end);
    size += end - kept;
  };
  for (let start = 0; start < body.length;) {
    const lf = body.indexOf(LF, start);
    const next = lf === -1 ? body.length : lf + 1;
    const lineEnd = lf === -1 ? body.length : lf > start && body[lf - 1] === CR ? lf - 1 : lf;
    let end = lineEnd;
    while (end > start && isBlank(body[end - 1])) end--;
    if (end > start && body[end - 1] === EQUALS) {
      // A soft break: the `=`, the whitespace and the line break go.
      move(end - 1);
      kept = next;
    } else if (end < lineEnd) {
      // The whitespace before the line end goes; the line end stays.
      move(end);
      kept = lineEnd;
    }
    start = next;
  }
  move(body.length);
  return size;
}

/** The same first pass byte by byte, for bodies with a lone CR (around which whitespace also goes). */
function joinBytes(body: Buffer, joined: Buffer): number {
  const length = body.length;
  let size = 0;
  for (let i = 0; i < length; i++) {
    const byte = body[i];
    if (isBlank(byte)) {
      let end = i;
      while (end < length && isBlank(body[end])) end++;
      // A run before a line break or the end goes; any other is kept.
      if (end < length && body[end] !== CR && body[end] !== LF) for (let k = i; k < end; k++) joined[size++] = body[k];
      i = end - 1;
    } else if (byte === EQUALS) {
      // A soft break once the whitespace before line breaks is gone: `=` ws* (end | LF | CR ws* LF).
      let next = i + 1;
      while (next < length && isBlank(body[next])) next++;
      if (next === length) break;
      if (body[next] === CR) {
        let after = next + 1;
        while (after < length && isBlank(body[after])) after++;
        if (after < length && body[after] === LF) next = after;
      }
      if (body[next] === LF) i = next;
      else joined[size++] = byte;
    } else joined[size++] = byte;
  }
  return size;
}

/**
 * Quoted-printable as libqp decodes it (mailparser's decoder), in its two passes, over bytes rather
 * than a string: spaces and tabs before a line break or the end dropped and soft breaks (`=` before
 * CRLF, LF or the end) removed; then `=XX` decoded, any other `=` kept as it is. libqp's regular
 * expressions and per-character string reads were ~30 % of the edge's CPU.
 */
export function decodeQuotedPrintable(body: Buffer): Buffer {
  const joined = Buffer.allocUnsafe(body.length);
  const size = onlyCrlf(body) ? joinLines(body, joined) : joinBytes(body, joined);
  // Decoded in place: the write position never passes the read position.
  let at = 0;
  let from = 0;
  // From one `=` to the next, the bytes between moved whole.
  for (let i = joined.indexOf(EQUALS); i !== -1 && i < size; i = joined.indexOf(EQUALS, i + 1)) {
    if (i >= size - 2) break;
    const high = hexValue(joined[i + 1]);
    const low = hexValue(joined[i + 2]);
    if (high < 0 || low < 0) continue;
    joined.copyWithin(at, from, i);
    at += i - from;
    joined[at++] = (high << 4) | low;
    from = i + 3;
    i += 2;
  }
  joined.copyWithin(at, from, size);
  at += size - from;
  return joined.subarray(0, at);
}

/**
 * The bytes with each CR that precedes an LF dropped: what `/\r?\n/g → '\n'` does to their UTF-8 text
 * (CR and LF are never part of a multi-byte sequence), without a second 100 KB string. `owned`: the
 * buffer may be changed in place (a decoder's output; never the message's own bytes).
 */
export function withoutCrBeforeLf(bytes: Buffer, owned: boolean): Buffer {
  if (!bytes.includes(CR)) return bytes;
  const out = owned ? bytes : Buffer.allocUnsafe(bytes.length);
  let at = 0;
  const move = (start: number, end: number) => {
    if (owned) bytes.copyWithin(at, start, end);
    else bytes.copy(out, at, start, end);
    at += end - start;
  };
  let from = 0;
  for (let lf = bytes.indexOf(LF); lf !== -1; lf = bytes.indexOf(LF, lf + 1)) {
    if (lf === 0 || bytes[lf - 1] !== CR) continue;
    move(from, lf - 1);
    from = lf;
  }
  move(from, bytes.length);
  return out.subarray(0, at);
}

const WELL_FORMED_BASE64 = /^[A-Za-z0-9+/\r\n]*(?:={0,2})[\r\n]*$/;

/** A leaf's decoded text as mailparser gives it (newlines as \n), or null when it must parse it. */
function leafText(headers: Map<string, string>, body: Buffer, root: boolean): string | null {
  if (headers.has('content-disposition')) return null;
  const type = readContentType(headers.get('content-type') ?? (root ? 'text/plain' : undefined));
  if (!type || (type.value !== 'text/plain' && type.value !== 'text/html')) return null;
  if ((type.params.get('format') ?? '').toLowerCase() === 'flowed') return null;
  const charset = (type.params.get('charset') ?? 'utf-8').toLowerCase().replace(/[^a-z0-9]+/g, '');
  if (!['ascii', 'usascii', 'utf8'].includes(charset)) return null;
  const encoding = (headers.get('content-transfer-encoding') ?? '').toLowerCase();
  let decoded: Buffer;
  if (encoding === 'quoted-printable') decoded = withoutCrBeforeLf(decodeQuotedPrintable(body), true);
  else if (encoding === 'base64') {
    const text = body.toString('latin1');
    if (!WELL_FORMED_BASE64.test(text)) return null;
    decoded = withoutCrBeforeLf(Buffer.from(text, 'base64'), true);
  } else if (['', '7bit', '8bit', 'binary'].includes(encoding)) decoded = withoutCrBeforeLf(body, false);
  else return null;
  return decoded.toString();
}

const BLANK_LINE_CRLF = Buffer.from('\r\n\r\n');
const BLANK_LINE_LF = Buffer.from('\n\n');

/** Where a header block ends: the index of the body's first byte, or -1. */
export function bodyStartOf(raw: Buffer): number {
  const crlf = raw.indexOf(BLANK_LINE_CRLF);
  // Only an LF LF before the first CRLF CRLF counts: searched that far, not through a CRLF body to its end.
  const lf = (crlf === -1 ? raw : raw.subarray(0, crlf)).indexOf(BLANK_LINE_LF);
  if (crlf === -1 && lf === -1) return -1;
  if (crlf !== -1 && (lf === -1 || crlf < lf)) return crlf + 4;
  return lf + 2;
}

/**
 * The parts of a multipart body between its delimiter lines (RFC 2046 §5.1.1), each without the line
 * break that belongs to the next delimiter; null without a close delimiter.
 */
function splitMultipart(body: Buffer, boundary: string): Buffer[] | null {
  const open = Buffer.from(`--${boundary}`);
  const parts: Buffer[] = [];
  let partStart = -1;
  // Straight to each occurrence of the delimiter (a line-by-line walk cost a Buffer per line).
  for (let from = 0; ;) {
    const at = body.indexOf(open, from);
    if (at === -1) return null;
    from = at + 1;
    if (at > 0 && body[at - 1] !== LF) continue;
    let lineEnd = body.indexOf(LF, at);
    if (lineEnd === -1) lineEnd = body.length;
    const contentEnd = body[lineEnd - 1] === CR ? lineEnd - 1 : lineEnd;
    const rest = body.toString('latin1', at + open.length, contentEnd);
    const close = rest === '--';
    // A delimiter with padding or more after it is mailparser's to judge.
    if (!close && rest !== '') return null;
    if (partStart !== -1) {
      // The line break before the delimiter is the delimiter's.
      let end = at;
      if (end > partStart && body[end - 1] === LF) end--;
      if (end > partStart && body[end - 1] === CR) end--;
      parts.push(body.subarray(partStart, end));
    }
    if (close) return parts;
    partStart = lineEnd + 1;
    from = partStart;
  }
}

/**
 * The text and HTML of a message of a simple shape, or null. `headerLines` are the message's own
 * fields as mailparser read them (its header parsing is kept whatever the body): `{ key, line }`.
 */
export function simpleBodyOf(
  raw: Buffer,
  bodyStart: number,
  headerLines: ReadonlyArray<{ key: string; line: string }>,
): SimpleBody | null {
  const rootHeaders = new Map<string, string>();
  for (const { key, line } of headerLines) {
    if (key !== 'content-type' && key !== 'content-transfer-encoding' && key !== 'content-disposition') continue;
    if (rootHeaders.has(key)) return null;
    rootHeaders.set(key, headerValue(line));
  }
  const body = raw.subarray(bodyStart);
  const type = readContentType(rootHeaders.get('content-type') ?? 'text/plain');
  if (!type) return null;
  if (type.value === 'text/plain' || type.value === 'text/html') {
    const content = leafText(rootHeaders, body, true);
    if (content === null) return null;
    if (content === '') return { text: undefined, html: undefined };
    // The root HTML part with no text gives an empty text (skipHtmlToText), as mailparser.
    return type.value === 'text/plain' ? { text: content, html: undefined } : { text: '', html: content };
  }
  const boundary = type.params.get('boundary');
  if (type.value !== 'multipart/alternative' || !boundary) return null;
  if (rootHeaders.has('content-transfer-encoding') || rootHeaders.has('content-disposition')) return null;
  const parts = splitMultipart(body, boundary);
  if (!parts || parts.length === 0) return null;
  const texts: string[] = [];
  const htmls: string[] = [];
  for (const part of parts) {
    const start = bodyStartOf(part);
    // A part whose body is empty: mailsplit gives it the delimiter's line break; left to mailparser.
    if (start === -1 || start === part.length) return null;
    const partHeaders = readPartHeaders(part.subarray(0, start).toString('latin1'));
    if (!partHeaders || !partHeaders.has('content-type')) return null;
    const content = leafText(partHeaders, part.subarray(start), false);
    if (content === null) return null;
    if (content === '') continue;
    if (readContentType(partHeaders.get('content-type'))!.value === 'text/plain') texts.push(content);
    else htmls.push(content);
  }
  return {
    text: texts.length ? texts.join('\n') : undefined,
    html: htmls.length ? htmls.join('<br/>\n') : undefined,
  };
}
