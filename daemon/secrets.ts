// The daemon's master secret: JWT_SECRET when set, else one generated on first boot and kept in
// DATA_DIR (mode 0600). Sub-keys for other uses are derived from it, never reused directly.
import { hkdfSync, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export interface Secrets {
  jwtSecret: string;
  /** 32-byte key for encrypting secrets at rest (DKIM private keys, project SMTP passwords). */
  encryptionKey: Buffer;
  /** Key for signed, opaque tokens in links (unsubscribe, tracking). */
  linkSigningKey: Buffer;
}

export function loadSecrets(dataDir: string, jwtSecret: string | null): Secrets {
  let master = jwtSecret;
  if (master === null) {
    const file = join(dataDir, 'secret.key');
    if (existsSync(file)) {
      master = readFileSync(file, 'utf8').trim();
    } else {
      mkdirSync(dataDir, { recursive: true });
      master = randomBytes(48).toString('base64url');
      writeFileSync(file, master + '\n', { mode: 0o600, flag: 'wx' });
    }
  }
  const derive = (label: string) => Buffer.from(hkdfSync('sha256', master!, 'svc-email', label, 32));
  return { jwtSecret: master, encryptionKey: derive('encryption-at-rest'), linkSigningKey: derive('link-signing') };
}
