// The one certificate pair of `npm run bench:mta`'s SMTP columns: every server the injector talks to
// (svc's submission port, Postfix's smtpd, Haraka) offers STARTTLS with it, so each column pays the
// same handshake and the same encryption per byte. Self-signed for localhost (the injector does not
// verify it), RSA-2048 as svc's own generated pair.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { selfSignedPair } from '../daemon/smtp/tls.ts';

export interface BenchTls {
  certFile: string;
  keyFile: string;
  remove(): void;
}

export function writeBenchTls(): BenchTls {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-tls-'));
  const pair = selfSignedPair('localhost');
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  writeFileSync(certFile, pair.cert);
  // Readable by Postfix's and Haraka's processes, which may read it after dropping privileges.
  writeFileSync(keyFile, pair.key, { mode: 0o644 });
  return { certFile, keyFile, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
