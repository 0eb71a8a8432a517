// A self-signed certificate pair made by the real openssl (Debian's openssl package), for the tests of
// the TLS listeners (the API, the SMTP edge).
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CertificateFiles {
  cert: string;
  key: string;
  /** SHA-256 fingerprint of the certificate, as a TLS peer reports it. */
  fingerprint: string;
}

/** Writes `<name>.crt` and `<name>.key` into `dir`: CN `commonName`, valid for two days. */
export function makeSelfSignedPair(
  dir: string,
  name: string,
  commonName: string,
  subjectAltName?: string,
): CertificateFiles {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  const extension = subjectAltName ? ['-addext', `subjectAltName=${subjectAltName}`] : [];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      `/CN=${commonName}`,
      ...extension,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key, fingerprint: new X509Certificate(readFileSync(cert)).fingerprint256 };
}
