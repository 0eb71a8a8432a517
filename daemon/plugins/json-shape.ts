// The shape of a JSON body, read from its bytes as they arrive and before anything parses them: how
// deep it nests and how many members (object keys and array items) it holds. JSON.parse of a body of
// many keys is slow (V8 builds a dictionary object; 900,000 keys in 10 MB held the event loop for
// 0.6 s, and the walks after it for seconds more), so a body past either bound is refused while it is
// still arriving, at the cost of reading it up to that point (request-body.ts).
//
// The scanner does not check that the bytes are JSON: JSON.parse does that after it, on a body the
// scanner let through. It only tracks strings (so that brackets and commas inside them do not count),
// brackets and commas; inside a string it jumps from quote to quote with Buffer.indexOf.

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const SPACE = 0x20;
const TAB = 0x09;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** A string is first looked through this far byte by byte, then searched with indexOf. */
const SHORT_STRING_BYTES = 64;
/** Bytes of a key kept to name the field of a body that nests too deep: a name, not the key itself. */
const KEY_NAME_BYTES = 200;
/** Segments of a path an answer names, as plugins/json-body.ts does: a deep body's path is long. */
const PATH_SEGMENTS = 8;

export type JsonShapeProblem =
  { kind: 'depth'; maxDepth: number; path: string } | { kind: 'members'; maxMembers: number };

/** One open object or array: which of its members the scan is in. */
interface Level {
  isArray: boolean;
  /** The current item's index (arrays). */
  index: number;
  /**
   * The current member's key (objects) as raw bytes: where it lies in the chunk it came in. Decoded
   * only to name the field of a body that nests too deep; kept without a copy (a copy per key was
   * most of the scan's cost on a body of many keys).
   */
  keyChunk: Buffer | null;
  keyFrom: number;
  keyTo: number;
}

function decodeKey(raw: Buffer): string {
  const text = raw.toString('utf8');
  if (!text.includes('\\')) return text;
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return text; // cut inside an escape: the raw text still names it
  }
}

/** The path of the member at the innermost level, as storable-text.ts's unstorablePart writes it. */
function pathOf(levels: Level[]): string {
  let path = '';
  for (const level of levels) {
    if (level.isArray) path = `${path}[${level.index}]`;
    else {
      const key =
        level.keyChunk === null
          ? ''
          : decodeKey(level.keyChunk.subarray(level.keyFrom, Math.min(level.keyTo, level.keyFrom + KEY_NAME_BYTES)));
      path = path ? `${path}.${key}` : key;
    }
  }
  return path.split('.').slice(0, PATH_SEGMENTS).join('.') || '(body)';
}

export class JsonShapeScanner {
  private readonly levels: Level[] = [];
  private members = 0;
  private inString = false;
  /** The previous byte was a backslash inside a string (a chunk may end between the two). */
  private escaped = false;
  /** A container just opened: its first token says whether it holds a member. */
  private firstPending = false;
  /** Inside an object, where a key comes next. */
  private keyNext = false;
  /** The string being read is a key: the level it names a member of, and where it started. */
  private keyOf: Level | null = null;
  private keyStart = 0;
  /** The start of a key a chunk ended inside of (copied: its chunk is not kept). */
  private keyHead: Buffer | null = null;

  constructor(
    private readonly maxDepth: number,
    private readonly maxMembers: number,
  ) {}

  /** Reads the next bytes of the body; answers the first bound it passes, or null. */
  feed(chunk: Buffer): JsonShapeProblem | null {
    const length = chunk.length;
    // Next quote and backslash at or after the position, found once per chunk position (indexOf is
    // native and fast); `length` when there is none left in this chunk.
    let nextQuote = -1;
    let nextBackslash = -1;
    let at = 0;
    while (at < length) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          at++;
          continue;
        }
        // Most strings are short (keys, words): looked through here, byte by byte; a long one (a body,
        // an attachment) is jumped with Buffer.indexOf, whose call costs more than a short look.
        const near = Math.min(length, at + SHORT_STRING_BYTES);
        let end = at;
        while (end < near && chunk[end] !== QUOTE && chunk[end] !== BACKSLASH) end++;
        if (end < near) {
          if (chunk[end] === BACKSLASH) {
            at = end + 1;
            this.escaped = true;
            continue;
          }
          if (this.keyOf !== null) this.endKey(chunk, end);
          at = end + 1;
          this.inString = false;
          continue;
        }
        if (near === length) {
          at = length;
          break;
        }
        if (nextQuote < at) nextQuote = indexOrEnd(chunk, QUOTE, at);
        if (nextBackslash < at) nextBackslash = indexOrEnd(chunk, BACKSLASH, at);
        if (nextBackslash < nextQuote) {
          at = nextBackslash + 1;
          this.escaped = true;
          continue;
        }
        if (nextQuote === length) break;
        if (this.keyOf !== null) this.endKey(chunk, nextQuote);
        at = nextQuote + 1;
        this.inString = false;
        continue;
      }
      const byte = chunk[at++];
      if (byte === SPACE || byte === LINE_FEED || byte === CARRIAGE_RETURN || byte === TAB) continue;
      if (this.firstPending) {
        this.firstPending = false;
        if (byte !== CLOSE_OBJECT && byte !== CLOSE_ARRAY && ++this.members > this.maxMembers)
          return { kind: 'members', maxMembers: this.maxMembers };
      }
      switch (byte) {
        case QUOTE:
          this.inString = true;
          if (this.keyNext) {
            this.keyNext = false;
            this.keyOf = this.levels.at(-1) ?? null;
            this.keyStart = at;
            this.keyHead = null;
          }
          break;
        case OPEN_OBJECT:
        case OPEN_ARRAY:
          if (this.levels.length >= this.maxDepth)
            return { kind: 'depth', maxDepth: this.maxDepth, path: pathOf(this.levels) };
          this.levels.push({ isArray: byte === OPEN_ARRAY, index: 0, keyChunk: null, keyFrom: 0, keyTo: 0 });
          this.firstPending = true;
          this.keyNext = byte === OPEN_OBJECT;
          break;
        case CLOSE_OBJECT:
        case CLOSE_ARRAY:
          this.levels.pop(); // one too many closes is not JSON: JSON.parse says so
          this.keyNext = false;
          break;
        case COMMA: {
          if (++this.members > this.maxMembers) return { kind: 'members', maxMembers: this.maxMembers };
          const level = this.levels.at(-1);
          if (level?.isArray) level.index++;
          else if (level) this.keyNext = true;
          break;
        }
        case COLON:
          this.keyNext = false;
          break;
        default:
          break; // numbers, true, false, null
      }
    }
    if (this.inString) this.keyAcrossChunks(chunk);
    return null;
  }

  /** A key ends at `end` of this chunk: its level keeps where it lies. */
  private endKey(chunk: Buffer, end: number): void {
    const level = this.keyOf!;
    if (this.keyHead === null) {
      level.keyChunk = chunk;
      level.keyFrom = this.keyStart;
      level.keyTo = end;
    } else {
      level.keyChunk = Buffer.concat([this.keyHead, chunk.subarray(0, Math.min(end, KEY_NAME_BYTES))]);
      level.keyFrom = 0;
      level.keyTo = level.keyChunk.length;
    }
    this.keyOf = null;
    this.keyHead = null;
  }

  /** The chunk ends inside a string: a key's start so far is copied (at most KEY_NAME_BYTES). */
  private keyAcrossChunks(chunk: Buffer): void {
    if (this.keyOf === null) return;
    const held = this.keyHead?.length ?? 0;
    if (held < KEY_NAME_BYTES) {
      const piece = Buffer.from(chunk.subarray(this.keyStart, this.keyStart + KEY_NAME_BYTES - held));
      this.keyHead = this.keyHead === null ? piece : Buffer.concat([this.keyHead, piece]);
    }
    this.keyStart = 0;
  }
}

function indexOrEnd(chunk: Buffer, byte: number, from: number): number {
  const found = chunk.indexOf(byte, from);
  return found === -1 ? chunk.length : found;
}
