// Password hashing with scrypt (node:crypto) at OWASP's recommended cost: N=2^17, r=8, p=1
// (128 MiB, a few hundred ms). The stored form names its parameters, so they can be raised later
// and old hashes still verify: `scrypt$<log2 N>$<r>$<p>$<salt b64>$<hash b64>`.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const LOG2_N = 17;
const R = 8;
const P = 1;
const KEY_BYTES = 32;
const SALT_BYTES = 16;

function derive(password: string, salt: Buffer, log2N: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** log2N;
  // scrypt needs 128 * N * r bytes; Node's default cap (32 MiB) is below OWASP's cost.
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_BYTES, options, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, LOG2_N, R, P);
  return ['scrypt', LOG2_N, R, P, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Constant-time check of a password against a stored hash; false for any malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [log2N, r, p] = parts.slice(1, 4).map(Number);
  if (![log2N, r, p].every(Number.isInteger) || log2N < 10 || log2N > 22 || r < 1 || r > 32 || p < 1 || p > 16)
    return false;
  const expected = Buffer.from(parts[5], 'base64');
  const actual = await derive(password, Buffer.from(parts[4], 'base64'), log2N, r, p);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

// Module-level on purpose: a memo of one constant's hash (any salt serves), no connection, tenant or expiry.
let dummyHash: Promise<string> | null = null;

/**
 * Spends the same time as a real check, for sign-ins with an unknown address, so response time
 * does not tell which addresses have an account.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('dummy password that never matches anything');
  await verifyPassword(password, await dummyHash);
  return false;
}
