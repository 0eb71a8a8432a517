// Opaque, signed tokens for the public links a message carries (open pixel, click redirect,
// unsubscribe). The token is the only credential of those routes: HMAC-SHA256 under
// Secrets.linkSigningKey, so a token cannot be forged or pointed at another URL or address.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type LinkToken =
  | { k: 'o'; e: string }
  | { k: 'c'; e: string; u: string }
  | { k: 'u'; e: string; t: string; a: string };

const MAC_BYTES = 16;

function mac(key: Buffer, body: string): Buffer {
  return createHmac('sha256', key).update(body).digest().subarray(0, MAC_BYTES);
}

export function signLinkToken(key: Buffer, token: LinkToken): string {
  const body = Buffer.from(JSON.stringify(token)).toString('base64url');
  return `${body}.${mac(key, body).toString('base64url')}`;
}

/** The token's content when its signature holds and its kind is `kind`; null otherwise. */
export function readLinkToken<K extends LinkToken['k']>(key: Buffer, value: string, kind: K): Extract<LinkToken, { k: K }> | null {
  const dot = value.indexOf('.');
  if (dot <= 0 || value.length > 8192) return null;
  const body = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), 'base64url');
  const expected = mac(key, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as LinkToken;
    return parsed.k === kind ? (parsed as Extract<LinkToken, { k: K }>) : null;
  } catch {
    return null;
  }
}
