// Secrets at rest (TOTP secrets, DKIM private keys, project SMTP passwords) are sealed with
// AES-256-GCM under Secrets.encryptionKey. The sealed form is one text column:
// `v1.<iv>.<tag>.<ciphertext>` in base64url, so a database dump alone reveals nothing and any
// tampering fails the tag check instead of yielding a wrong secret.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealedDataError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SealedDataError';
  }
}

function checkKey(key: Buffer): void {
  if (key.length !== 32) throw new SealedDataError('the encryption key must be 32 bytes (AES-256)');
}

export function seal(key: Buffer, plaintext: string): string {
  checkKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [VERSION, iv.toString('base64url'), tag.toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/** The plaintext of a value made by seal(); throws SealedDataError when it was altered or the key differs. */
export function unseal(key: Buffer, sealed: string): string {
  checkKey(key);
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) throw new SealedDataError('not a sealed value');
  const [, ivText, tagText, dataText] = parts;
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SealedDataError('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(Buffer.from(dataText, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SealedDataError('the sealed value was altered or sealed with another key');
  }
}

export function isSealed(value: string): boolean {
  return value.startsWith(`${VERSION}.`) && value.split('.').length === 4;
}
