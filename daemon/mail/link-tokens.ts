// Opaque tokens for the public links a message carries (open pixel, click redirect, unsubscribe).
// The token is the only credential of those routes, so it must be unforgeable, and it travels in
// mail that is forwarded and logged, so it must reveal nothing: the payload (kind, e-mail id, and
// the click URL or the tenant and recipient) is sealed with AES-256-GCM under Secrets.linkSigningKey.
// Sealed rather than a random id looked up server-side: a message with many links would otherwise
// cost one stored row per link on the drain's hot path, and a token needs no table to be checked.
// Layout (base64url, no separators): iv (12) · tag (16) · ciphertext. Tokens of the earlier signed
// base64-JSON format no longer open.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { RandomBytes } from './random-pool.ts';

export type LinkToken =
  | { k: 'o'; e: string }
  | { k: 'c'; e: string; u: string }
  | { k: 'u'; e: string; t: string; a: string }
  /** An inbound message's stored attachment (tenant, attachment id, expiry in Unix seconds): issue 52. */
  | { k: 'a'; t: string; i: string; x: number };

const IV_BYTES = 12;
const TAG_BYTES = 16;
const MAX_TOKEN_LENGTH = 8192;

/** `random` gives the IV: the send thread's pool (random-pool.ts), else a call of its own. */
export function signLinkToken(key: Buffer, token: LinkToken, random: RandomBytes = randomBytes): string {
  const iv = random(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(token), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

/** The token's content when it opens under `key` and its kind is `kind`; null otherwise. */
export function readLinkToken<K extends LinkToken['k']>(
  key: Buffer,
  value: string,
  kind: K,
): Extract<LinkToken, { k: K }> | null {
  if (value.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(value)) return null;
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const plain = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
    const parsed = JSON.parse(plain) as LinkToken;
    return parsed.k === kind ? (parsed as Extract<LinkToken, { k: K }>) : null;
  } catch {
    return null;
  }
}
