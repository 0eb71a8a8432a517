// OpenDKIM for `npm run bench:mta`'s fourth column, "Postfix + OpenDKIM": Debian's opendkim
// (apt-get install opendkim) as Postfix's milter, signing each message at submission with the
// sending domain's key, relaxed/relaxed, rsa-sha256, the header fields svc signs (DKIM_SIGNED_HEADERS):
// the work svc does when it signs each message itself, done the way a Postfix operator does it.
// One opendkim process in the foreground on a unix socket (as Debian configures it; over TCP on loopback
// each message waited ~100 ms on the milter's small writes), its own config and key under /tmp.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DKIM_SIGNED_HEADERS } from '../daemon/mail/compose.ts';
import { spawnPeer, waitForPeerReady } from './children.ts';

export const OPENDKIM_BIN = '/usr/sbin/opendkim';
export const OPENDKIM_HOW_TO = 'DEBIAN_FRONTEND=noninteractive apt-get install -y opendkim';

export function opendkimInstalled(): boolean {
  return existsSync(OPENDKIM_BIN);
}

export interface OpenDkimInstance {
  /** What Postfix's smtpd_milters names. */
  milter: string;
  version: string;
  stop(): Promise<void>;
}

export async function startOpenDkim(key: {
  domainName: string;
  keySelector: string;
  privateKey: string;
}): Promise<OpenDkimInstance> {
  const base = mkdtempSync(join(tmpdir(), 'svc-bench-opendkim-'));
  // Postfix's smtpd runs as the postfix user: it must reach the socket.
  chmodSync(base, 0o755);
  const socket = join(base, 'opendkim.sock');
  const keyFile = join(base, 'key.pem');
  writeFileSync(keyFile, key.privateKey, { mode: 0o600 });
  const conf = join(base, 'opendkim.conf');
  writeFileSync(
    conf,
    `Mode s
Syslog no
Background no
Canonicalization relaxed/relaxed
SignatureAlgorithm rsa-sha256
Domain ${key.domainName}
Selector ${key.keySelector}
KeyFile ${keyFile}
SignHeaders ${DKIM_SIGNED_HEADERS.split(':').join(',')}
Socket local:${socket}
UMask 000
PidFile ${join(base, 'opendkim.pid')}
InternalHosts 127.0.0.1
RequireSafeKeys false
`,
  );
  const peer = spawnPeer('opendkim', OPENDKIM_BIN, ['-f', '-x', conf]);
  const { child } = peer;
  await waitForPeerReady(peer, () => existsSync(socket), { what: 'make its socket', timeoutMs: 10_000 });
  const version = /OpenDKIM Filter v(\S+)/.exec(execFileSync(OPENDKIM_BIN, ['-V']).toString())?.[1] ?? '';
  return {
    milter: `unix:${socket}`,
    version,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}
