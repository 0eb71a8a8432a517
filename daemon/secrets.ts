// The daemon's master secret: JWT_SECRET when set, else one generated on first boot and kept in
// DATA_DIR (mode 0600). Sub-keys for other uses are derived from it, never reused directly.
import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { ConfigError } from './config.ts';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export interface Secrets {
  jwtSecret: string;
  /** 32-byte key for encrypting secrets at rest (DKIM private keys, project SMTP passwords). */
  encryptionKey: Buffer;
  /** Key for signed, opaque tokens in links (unsubscribe, tracking). */
  linkSigningKey: Buffer;
  /** HMAC of a fixed label under a key derived from the secret: tells secrets apart, reveals nothing. */
  keyCheck: string;
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
  return {
    jwtSecret: master,
    encryptionKey: derive('encryption-at-rest'),
    linkSigningKey: derive('link-signing'),
    keyCheck: createHmac('sha256', derive('key-check')).update('svc-key-check').digest('hex'),
  };
}

export const SECRET_MISMATCH_MESSAGE =
  'this database was set up by a daemon with another secret: start every node with the same JWT_SECRET as the first one ' +
  '(or copy its DATA_DIR/secret.key), never a newly generated one.';

/**
 * The first node to boot on a database records its key-check value; every later node must match it.
 * A mismatch is a configuration error (exit 78): the node would fail every sealed value and token.
 */
export async function checkSecretAgainstDatabase(
  sequelize: Sequelize,
  secrets: Pick<Secrets, 'keyCheck'>,
): Promise<'recorded' | 'matched'> {
  const rows = await sequelize.query<{ check_value: string; inserted: boolean }>(
    `WITH inserted AS (
       INSERT INTO platform_secrets_check (id, check_value) VALUES (1, :value)
       ON CONFLICT (id) DO NOTHING RETURNING check_value
     )
     SELECT check_value, true AS inserted FROM inserted
     UNION ALL
     SELECT check_value, false FROM platform_secrets_check WHERE NOT EXISTS (SELECT 1 FROM inserted)`,
    { replacements: { value: secrets.keyCheck }, type: QueryTypes.SELECT },
  );
  const row = rows[0];
  if (!row) throw new Error('the secret key-check row vanished while it was being written');
  if (row.inserted) return 'recorded';
  const stored = Buffer.from(row.check_value, 'utf8');
  const mine = Buffer.from(secrets.keyCheck, 'utf8');
  if (stored.length !== mine.length || !timingSafeEqual(stored, mine))
    throw new ConfigError('JWT_SECRET', SECRET_MISMATCH_MESSAGE);
  return 'matched';
}
