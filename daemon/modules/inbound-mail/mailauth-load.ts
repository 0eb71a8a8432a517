// mailauth loaded once per thread, with its DKIM/ARC key parse kept between messages. For every
// signature mailauth looks the key record up and then parses it from scratch: the record's tags,
// a joi check of its base64, `createPublicKey` of a PEM and an export back to PEM — ~0.3–0.5 ms of
// the reader thread's CPU for each message of a sender whose key it parsed a moment ago (issue 52 §5).
// mailauth offers no hook for it, so its `tools.getPublicKey` is wrapped before the verifiers that
// destructure it are loaded. The wrapper still asks the resolver every time (ours caches answers for
// seconds only, verdicts.ts) and reuses a parse only for the very same record text, type and minimum
// key size: a rotated or revoked key is a different record and is parsed (or refused) afresh, and a
// record that fails to parse is never kept, so what mailauth concludes is unchanged.
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

let installed = false;
/** Wraps mailauth's key parse; before anything of mailauth that uses it is loaded in this thread. */
export function installMailauthKeyCache(): void {
  if (installed) return;
  installed = true;
  const tools = createRequire(import.meta.url)('mailauth/lib/tools') as { getPublicKey: GetPublicKey };
  tools.getPublicKey = cachedGetPublicKey(tools.getPublicKey);
}

let mailauth: Promise<typeof import('mailauth')> | null = null;
/**
 * mailauth, loaded on first use (≈ 0.4 s of every boot otherwise, docs/boot.md) and only in the reader's
 * thread. The promise is kept: an `import()` per message still goes through the module loader (under
 * tsx a round trip to its hooks thread, ~1 ms of CPU a message in bench:inbound).
 */
export function loadMailauth(): Promise<typeof import('mailauth')> {
  installMailauthKeyCache();
  mailauth ??= import('mailauth');
  // A failed load is not kept: the next message tries again.
  mailauth.catch(() => (mailauth = null));
  return mailauth;
}
