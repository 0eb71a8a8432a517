// A certificate authority for the MTA tests, made by the real openssl: the MTA-STS policy servers and
// the MX hosts that must pass WebPKI validation get certificates from it, and the code under test is
// given its certificate as the only trusted root.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestCa {
  dir: string;
  /** The CA certificate, PEM. */
  certPem: string;
  /** A key pair and a certificate for `names` (the first is the CN), signed by this CA. */
  issue(fileName: string, names: string[], options?: { expired?: boolean }): { cert: string; key: string };
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: 'ignore' });
}

export function createTestCa(): TestCa {
  const dir = mkdtempSync(join(tmpdir(), 'test-ca-'));
  const caKey = join(dir, 'ca.key');
  const caCert = join(dir, 'ca.crt');
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    caKey,
    '-out',
    caCert,
    '-days',
    '2',
    '-subj',
    '/CN=svc test CA',
    '-addext',
    'basicConstraints=critical,CA:true',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return {
    dir,
    certPem: readFileSync(caCert, 'utf8'),
    issue(fileName, names, options = {}) {
      const key = join(dir, `${fileName}.key`);
      const csr = join(dir, `${fileName}.csr`);
      const cert = join(dir, `${fileName}.crt`);
      const extensions = join(dir, `${fileName}.ext`);
      writeFileSync(extensions, `subjectAltName=${names.map((name) => `DNS:${name}`).join(',')}\n`);
      openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', csr, '-subj', `/CN=${names[0]}`]);
      // `-days -1` makes a certificate whose validity ended a day before it began: expired from the start.
      openssl([
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        caCert,
        '-CAkey',
        caKey,
        '-CAcreateserial',
        '-out',
        cert,
        '-days',
        options.expired ? '-1' : '2',
        '-extfile',
        extensions,
      ]);
      return { cert, key };
    },
  };
}
