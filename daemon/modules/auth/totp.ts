// TOTP (RFC 6238: SHA-1, 6 digits, 30 s) with otplib. A code is matched to its time step, and
// the caller refuses any step at or before the last one accepted, so a code works once only.
import { authenticator } from 'otplib';

const STEP_SECONDS = 30;
/** One step either side of now, for clocks that drift a little. */
const totp = authenticator.clone({ window: 1, step: STEP_SECONDS, digits: 6 });

export const TOTP_ISSUER = 'svc email';

export function newTotpSecret(): string {
  return totp.generateSecret(20);
}

export function otpauthUrl(accountEmail: string, secret: string): string {
  return totp.keyuri(accountEmail, TOTP_ISSUER, secret);
}

/** The time step the code belongs to, or null when it matches none within the window. */
export function matchTotpStep(code: string, secret: string, now = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totp.clone({ epoch: now }).checkDelta(code, secret);
  if (delta === null) return null;
  return Math.floor(now / 1000 / STEP_SECONDS) + delta;
}
