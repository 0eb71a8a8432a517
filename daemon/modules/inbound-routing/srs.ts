// The Sender Rewriting Scheme for forwarded mail (docs/inbound.md step 5). A forward leaves from our
// servers; with its original envelope sender (alice@sender.example) the receiver checks SPF of
// sender.example against our IP and fails it. So the envelope sender becomes an address of our own
// return-path domain that encodes the original: `SRS0=<hash>=<tt>=<domain>=<local>@<ours>`, SPF then
// being ours (and passing), and a bounce to it can be turned back into the original sender.
// `tt` is the day (mod 1024) in two base32 characters, `hash` an HMAC of tt, domain and local part under
// a key derived from the link-signing secret (as the VERP tags are: mail/addresses.ts), so that nobody
// else can mint an address we would reverse (no open relay of bounces). Both are case-insensitive,
// since mail systems may change a local part's case.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { addressKey } from '../../mail/addresses.ts';
import { base32, BASE32_ALPHABET as BASE32 } from '../../mail/base32.ts';

/** 40 bits: each guess costs an SMTP transaction, and an address is good for MAX_AGE_DAYS. */
const HASH_CHARS = 8;
/** How long a bounce to a forward's envelope is accepted (libsrs2's default). */
export const SRS_MAX_AGE_DAYS = 21;
const DAY_MS = 86_400_000;
const TIMESTAMP_SLOTS = 1024;

function srsHash(linkSigningKey: Buffer, tt: string, domain: string, local: string): string {
  const mac = createHmac('sha256', addressKey(linkSigningKey, 'srs-envelope-sender'))
    .update(`${tt}=${domain}=${local}`.toLowerCase())
    .digest();
  return base32(mac, HASH_CHARS);
}

const daySlot = (nowMs: number) => Math.floor(nowMs / DAY_MS) % TIMESTAMP_SLOTS;
const encodeDay = (slot: number) => BASE32[slot >> 5] + BASE32[slot & 31];

/** The SRS0 envelope sender standing for `sender` at our return-path domain `srsDomain`. */
export function srsForward(linkSigningKey: Buffer, sender: string, srsDomain: string, nowMs = Date.now()): string {
  const at = sender.lastIndexOf('@');
  if (at <= 0) throw new Error(`${sender} is no address to rewrite`);
  const local = sender.slice(0, at);
  const domain = sender.slice(at + 1).toLowerCase();
  const tt = encodeDay(daySlot(nowMs));
  return `SRS0=${srsHash(linkSigningKey, tt, domain, local)}=${tt}=${domain}=${local}@${srsDomain}`;
}

/**
 * The original sender an SRS0 local part stands for, when we wrote it (its hash holds) and it is at
 * most SRS_MAX_AGE_DAYS old; else null. The local part is everything before the last `@`.
 */
export function srsReverse(linkSigningKey: Buffer, localPart: string, nowMs = Date.now()): string | null {
  const match = /^srs0=([a-z2-7]+)=([a-z2-7]{2})=([^=]+)=(.+)$/i.exec(localPart);
  if (!match) return null;
  const [, hash, tt, domain, local] = match;
  const expected = Buffer.from(srsHash(linkSigningKey, tt.toLowerCase(), domain, local));
  const given = Buffer.from(hash.toLowerCase());
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const slot = BASE32.indexOf(tt[0].toLowerCase()) * 32 + BASE32.indexOf(tt[1].toLowerCase());
  const age = (daySlot(nowMs) - slot + TIMESTAMP_SLOTS) % TIMESTAMP_SLOTS;
  return age <= SRS_MAX_AGE_DAYS ? `${local}@${domain.toLowerCase()}` : null;
}
