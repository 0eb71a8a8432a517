// mailauth loaded once per thread, with its DKIM/ARC key parse kept between messages. For every
// signature mailauth looks the key record up and then parses it from scratch: the record's tags,
// a joi check of its base64, `createPublicKey` of a PEM and an export back to PEM — ~0.3–0.5 ms of
// the reader thread's CPU for each message of a sender whose key it parsed a moment ago (issue 52 §5).
// mailauth offers no hook for it, so its `tools.getPublicKey` is wrapped before the verifiers that
// destructure it are loaded. The wrapper still asks the resolver every time (ours caches answers for
// seconds only, verdicts.ts) and reuses a parse only for the very same record text, type and minimum
// key size: a rotated or revoked key is a different record and is parsed (or refused) afresh, and a
// record that fails to parse is never kept, so what mailauth concludes is unchanged.
// Its line-break pass is replaced too (ensureLinebreaks below), with the same output.
import { createRequire } from 'node:module';

type Lookup = (name: string, rrtype: string) => Promise<unknown>;
type GetPublicKey = (
  type: string,
  name: string,
  minBitLength: number | undefined,
  resolver?: Lookup,
) => Promise<unknown>;

/** Distinct key records kept; a few hundred bytes each. Cleared whole past this (a flood of new selectors). */
const MAX_KEYS = 1_000;

/** The record as mailauth reads it (tools.js getPublicKey): the first answer's strings joined, whitespace removed. */
function recordText(answer: unknown): string {
  const list = answer as unknown[] | null | undefined;
  return list
    ? ([] as unknown[])
        .concat(list[0] ?? [])
        .join('')
        .replace(/\s+/g, '')
    : '';
}

function cachedGetPublicKey(parse: GetPublicKey): GetPublicKey {
  const parsed = new Map<string, unknown>();
  return async (type, name, minBitLength, resolver) => {
    if (!resolver) return parse(type, name, minBitLength, resolver);
    const answer = await resolver(name, 'TXT');
    const key = `${type} ${minBitLength ?? ''} ${recordText(answer)}`;
    if (parsed.has(key)) return parsed.get(key);
    // The answer already in hand is the one parsed: no second look-up between the two.
    const result = await parse(type, name, minBitLength, () => Promise.resolve(answer));
    if (parsed.size >= MAX_KEYS) parsed.clear();
    parsed.set(key, result);
    return result;
  };
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * mailauth's MessageParser.ensureLinebreaks (the DKIM verifier's first pass over every byte of the
 * message), the same output with one `indexOf` per line feed instead of a JavaScript step per byte:
 * 0.20 ms of CPU for bench:inbound's 49 KB message before, 0.02 ms after (3,000 runs each; issue 52 §5).
 * Each LF whose last non-LF byte before it (`lastByte`, kept across chunks, which an LF never sets) is
 * not a CR becomes CRLF: the bytes since the previous such point are yielded with a CRLF appended, the
 * rest after the last one as they are (the input itself when nothing was changed). mailauth 4.13.3's
 * quirk is kept on purpose, so that its verdicts stay exactly its own: in `\r\n\n` the second LF counts
 * as preceded by the CR and is left alone (test/inbound-mailauth-linebreaks.test.ts compares both).
 */
export function* ensureLinebreaks(this: { lastByte?: number }, input: Buffer): Generator<Buffer> {
  let last = this.lastByte;
  let pos = 0;
  let from = 0;
  for (let i = input.indexOf(LF, from); i !== -1; i = input.indexOf(LF, from)) {
    // Between `from` and i there is no LF: the byte before i, when it is one of them, is the last non-LF.
    if (i > from) last = input[i - 1];
    if (last !== CR) {
      yield i === 0 || pos === i ? Buffer.from('\r\n') : Buffer.concat([input.subarray(pos, i), Buffer.from('\r\n')]);
      pos = i + 1;
    }
    from = i + 1;
  }
  if (from < input.length) last = input[input.length - 1];
  this.lastByte = last;
  if (pos === 0) yield input;
  else if (pos < input.length) yield input.subarray(pos);
}

let installed = false;
/**
 * Wraps mailauth's key parse and replaces its line-break pass (ensureLinebreaks above); before
 * anything of mailauth that uses them is loaded in this thread.
 */
export function installMailauthPatches(): void {
  if (installed) return;
  installed = true;
  const require = createRequire(import.meta.url);
  const tools = require('mailauth/lib/tools') as { getPublicKey: GetPublicKey };
  tools.getPublicKey = cachedGetPublicKey(tools.getPublicKey);
  const { MessageParser } = require('mailauth/lib/dkim/message-parser') as {
    MessageParser: { prototype: { ensureLinebreaks: typeof ensureLinebreaks } };
  };
  MessageParser.prototype.ensureLinebreaks = ensureLinebreaks;
}

let mailauth: Promise<typeof import('mailauth')> | null = null;
/**
 * mailauth, loaded on first use (≈ 0.4 s of every boot otherwise, docs/boot.md) and only in the reader's
 * thread. The promise is kept: an `import()` per message still goes through the module loader (under
 * tsx a round trip to its hooks thread, ~1 ms of CPU a message in bench:inbound).
 */
export function loadMailauth(): Promise<typeof import('mailauth')> {
  installMailauthPatches();
  mailauth ??= import('mailauth');
  // A failed load is not kept: the next message tries again.
  mailauth.catch(() => (mailauth = null));
  return mailauth;
}
