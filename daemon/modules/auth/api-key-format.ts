// API keys look like `svc_live_<12 look-up chars><40 secret chars>`. The look-up part (with its
// prefix) is stored in clear to find the row; the whole key only as a SHA-256 hash. A key carries
// 238 bits of randomness, so a fast hash is enough (no password stretching needed).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_KEY_PREFIX, type ApiKeyEnvironment } from '../../../shared/constants.ts';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LOOKUP_LENGTH = 12;
const SECRET_LENGTH = 40;
const KEY_PATTERN = /^svc_(live|test)_([A-Za-z0-9]{12})([A-Za-z0-9]{40})$/;

function randomText(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    // 248 = 4 * 62: rejecting the rest keeps every character equally likely.
    if (bytes[i] < 248) out += ALPHABET[bytes[i] % 62];
  }
  return out.length === length ? out : randomText(length);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateApiKey(environment: ApiKeyEnvironment): { key: string; prefix: string; keyHash: string } {
  const prefix = API_KEY_PREFIX[environment] + randomText(LOOKUP_LENGTH);
  const key = prefix + randomText(SECRET_LENGTH);
  return { key, prefix, keyHash: hashApiKey(key) };
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX.live) || token.startsWith(API_KEY_PREFIX.test);
}

/** The stored look-up prefix of a presented key, or null when it is not shaped like one. */
export function apiKeyPrefixOf(token: string): string | null {
  const match = KEY_PATTERN.exec(token);
  return match ? `svc_${match[1]}_${match[2]}` : null;
}

export function apiKeyMatches(token: string, storedHash: string): boolean {
  const presented = Buffer.from(hashApiKey(token), 'hex');
  const stored = Buffer.from(storedHash, 'hex');
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}

export { LOOKUP_LENGTH, SECRET_LENGTH };
