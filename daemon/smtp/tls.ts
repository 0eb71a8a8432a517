// The certificate of the SMTP edge (STARTTLS and implicit TLS): the PEM pair named by
// SMTP_SUBMISSION_TLS_CERT / _KEY, or else a self-signed pair generated once into DATA_DIR/smtp-tls/
// and reused on later boots. Mail clients of apps (WordPress, Django, PHPMailer …) either skip
// verification or let the operator pin the certificate, so a self-signed pair makes TLS usable out
// of the box; production should name a real certificate. The pair is written with node:crypto and
// the small DER writer below, not the openssl binary, which a slim container may not have.
import { X509Certificate, createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import type { Config } from '../config.ts';
import { readPemPair, type TlsPair } from '../tls.ts';

export interface SmtpTls extends TlsPair {
  /** Where a self-signed pair was generated on this boot; null when configured or reused. */
  generatedAt: string | null;
  /** The certificate file in use. */
  certFile: string;
}

const VALIDITY_DAYS = 3650;
/** A reused self-signed certificate is replaced once it has less than this left. */
const RENEW_BEFORE_MS = 30 * 86_400_000;

// ---- A minimal DER writer: just what one self-signed certificate needs. ----

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...parts: Buffer[]) => tlv(0x30, ...parts);

function objectId(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * first + second];
  for (const value of rest) {
    const chunk = [value & 0x7f];
    for (let v = Math.floor(value / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/**
 * A non-negative INTEGER from big-endian bytes in DER's minimal form (X.690 §8.3.2): leading zero
 * bytes dropped, then one 0 put back only where the sign bit would be set. OpenSSL 3 refuses any
 * other form ("illegal padding"), which a random serial starting with 0x00 used to produce.
 */
export function derUnsignedInteger(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const value = bytes.subarray(start);
  return tlv(0x02, value[0] & 0x80 ? Buffer.concat([Buffer.from([0]), value]) : value);
}

/** UTCTime, good until 2049 (RFC 5280 §4.1.2.5.1). */
function utcTime(date: Date): Buffer {
  const text = date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z';
  return tlv(0x17, Buffer.from(text, 'ascii'));
}

function commonName(name: string): Buffer {
  return sequence(tlv(0x31, sequence(objectId('2.5.4.3'), tlv(0x0c, Buffer.from(name, 'utf8')))));
}

/** The subjectAltName: the host as dNSName or iPAddress, and localhost for local clients. */
function subjectAltName(host: string): Buffer {
  const names: Buffer[] = [];
  const version = isIP(host);
  if (version === 4) names.push(tlv(0x87, Buffer.from(host.split('.').map(Number))));
  else if (version === 0) names.push(tlv(0x82, Buffer.from(host, 'ascii')));
  if (host !== 'localhost') names.push(tlv(0x82, Buffer.from('localhost', 'ascii')));
  return sequence(objectId('2.5.29.17'), tlv(0x04, sequence(...names)));
}

/** A self-signed RSA-2048 / SHA-256 certificate for `host`, valid VALIDITY_DAYS from now. */
export function selfSignedPair(host: string, now = new Date(), serial = randomBytes(16)): TlsPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const algorithm = sequence(objectId('1.2.840.113549.1.1.11'), tlv(0x05));
  const name = commonName(host.slice(0, 64));
  const tbs = sequence(
    tlv(0xa0, derUnsignedInteger(Buffer.from([2]))),
    derUnsignedInteger(serial),
    algorithm,
    name,
    sequence(utcTime(new Date(now.getTime() - 60_000)), utcTime(new Date(now.getTime() + VALIDITY_DAYS * 86_400_000))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(0xa3, sequence(subjectAltName(host))),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, algorithm, tlv(0x03, Buffer.from([0]), signature));
  const pem = `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
  return { cert: Buffer.from(pem), key: Buffer.from(privateKey.export({ type: 'pkcs8', format: 'pem' })) };
}

/** True when the stored self-signed pair still fits together, names `host` and has a month left. */
function reusable(certFile: string, keyFile: string, host: string): TlsPair | null {
  try {
    const pair = { cert: readFileSync(certFile), key: readFileSync(keyFile) };
    const cert = new X509Certificate(pair.cert);
    if (!cert.checkPrivateKey(createPrivateKey(pair.key))) return null;
    if (new Date(cert.validTo).getTime() - Date.now() < RENEW_BEFORE_MS) return null;
    return cert.subject === `CN=${host.slice(0, 64)}` ? pair : null;
  } catch {
    return null;
  }
}

type TlsConfig = Pick<
  Config,
  'dataDir' | 'smtpSubmissionHost' | 'smtpSubmissionTlsCertFile' | 'smtpSubmissionTlsKeyFile'
>;

/** The pair SMTP_SUBMISSION_TLS_CERT / _KEY name, or null when they are unset (read again on SIGHUP). */
export function readConfiguredSmtpTls(config: TlsConfig): TlsPair | null {
  if (!config.smtpSubmissionTlsCertFile || !config.smtpSubmissionTlsKeyFile) return null;
  return readPemPair(
    { variable: 'SMTP_SUBMISSION_TLS_CERT', path: config.smtpSubmissionTlsCertFile },
    { variable: 'SMTP_SUBMISSION_TLS_KEY', path: config.smtpSubmissionTlsKeyFile },
  );
}

/** The configured pair, else the stored self-signed one, else a new self-signed one written to DATA_DIR. */
export function loadSmtpTls(config: TlsConfig): SmtpTls {
  const configured = readConfiguredSmtpTls(config);
  if (configured) return { ...configured, generatedAt: null, certFile: config.smtpSubmissionTlsCertFile! };
  const dir = join(config.dataDir, 'smtp-tls');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const host = config.smtpSubmissionHost;
  const stored = existsSync(certFile) ? reusable(certFile, keyFile, host) : null;
  if (stored) return { ...stored, generatedAt: null, certFile };
  const pair = selfSignedPair(host);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Written aside and renamed: two nodes booting on one DATA_DIR never read half a file.
  const suffix = `.${process.pid}.tmp`;
  writeFileSync(keyFile + suffix, pair.key, { mode: 0o600 });
  chmodSync(keyFile + suffix, 0o600);
  writeFileSync(certFile + suffix, pair.cert);
  renameSync(keyFile + suffix, keyFile);
  renameSync(certFile + suffix, certFile);
  return { ...pair, generatedAt: dir, certFile };
}
