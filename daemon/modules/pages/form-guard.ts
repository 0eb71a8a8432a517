// CSRF protection of the account pages' forms: a double submit bound to the link. The page sets a
// random nonce in a SameSite=Strict, HttpOnly cookie and puts a signed field in the form:
// `<expiry>.<HMAC(purpose, hash of the link token, nonce, expiry)>`. A POST is accepted only with
// both, matching, unexpired, for the same link and form: another site can neither read the nonce
// nor send the Strict cookie along, and a field taken from one link's page is useless for another.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a rendered form stays good: as long as the shortest link (a password reset). */
export const FORM_GUARD_TTL_MS = 60 * 60 * 1000;
export const FORM_GUARD_COOKIE = 'svc_form_guard';
const NONCE_PATTERN = /^[A-Za-z0-9_-]{32}$/;

export type FormPurpose = 'reset-password' | 'verify-email' | 'register';

/** The signing key of form guards, derived from the link-signing key so it is used for nothing else. */
export function formGuardKey(linkSigningKey: Buffer): Buffer {
  return createHmac('sha256', linkSigningKey).update('account-page-form-guard').digest();
}

/** The cookie's nonce when it looks like one of ours, so two open pages share it; else a new one. */
export function formNonce(cookieHeader: string | undefined): { nonce: string; fresh: boolean } {
  const existing = cookieValue(cookieHeader, FORM_GUARD_COOKIE);
  if (existing && NONCE_PATTERN.test(existing)) return { nonce: existing, fresh: false };
  return { nonce: randomBytes(24).toString('base64url'), fresh: true };
}

export function formGuardCookie(nonce: string, secure: boolean): string {
  const maxAge = Math.floor(FORM_GUARD_TTL_MS / 1000);
  return `${FORM_GUARD_COOKIE}=${nonce}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

interface GuardInput {
  key: Buffer;
  purpose: FormPurpose;
  linkToken: string;
  nonce: string;
}

function mac(input: GuardInput, expiresAt: number): Buffer {
  const linkHash = createHash('sha256').update(input.linkToken).digest('hex');
  return createHmac('sha256', input.key).update(`${input.purpose}\n${linkHash}\n${input.nonce}\n${expiresAt}`).digest();
}

export function issueFormGuard(input: GuardInput, now = Date.now()): string {
  const expiresAt = now + FORM_GUARD_TTL_MS;
  return `${expiresAt}.${mac(input, expiresAt).toString('base64url')}`;
}

/** Whether the posted field matches the cookie's nonce, this form and this link, and is unexpired. */
export function formGuardHolds(
  input: Omit<GuardInput, 'nonce'> & { cookieHeader: string | undefined; field: string },
  now = Date.now(),
): boolean {
  const nonce = cookieValue(input.cookieHeader, FORM_GUARD_COOKIE);
  const match = /^(\d{13})\.([A-Za-z0-9_-]{43})$/.exec(input.field);
  if (!nonce || !NONCE_PATTERN.test(nonce) || !match) return false;
  const expiresAt = Number(match[1]);
  if (expiresAt <= now || expiresAt > now + FORM_GUARD_TTL_MS) return false;
  // Compared as text: base64url decoding ignores the last character's spare bits, so bytes would
  // accept several spellings of one guard.
  const expected = Buffer.from(mac({ ...input, nonce }, expiresAt).toString('base64url'));
  return timingSafeEqual(Buffer.from(match[2]), expected);
}

function cookieValue(header: string | undefined, name: string): string | null {
  for (const part of (header ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return null;
}
