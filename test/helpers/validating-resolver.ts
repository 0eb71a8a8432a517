// A validating resolver for the DANE tests: Debian's unbound serving zones from files (auth-zone,
// for-upstream) and validating them against trust anchors, so the AD flag means what it means on a
// real network. Zones are signed with ldns-signzone (ldnsutils). Kinds of zone:
//  - signed: signed, its DS is a trust anchor: answers are authentic (AD);
//  - bogus: signed with one key while the trust anchor names another: answers are SERVFAIL;
//  - unsigned: not signed and under no anchor: answers come without AD.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDnsClient } from '../../daemon/mta/dns-query.ts';

export interface TestZoneFile {
  name: string;
  kind: 'signed' | 'bogus' | 'unsigned';
  /** Records relative to the zone, one per line: `mx-ee IN A 127.0.0.5`. */
  records: string[];
}

export interface ValidatingResolver {
  /** `127.0.0.1:port`, for DNS_SERVERS. */
  address: string;
  close(): Promise<void>;
}

function newKey(dir: string, zone: string): string {
  return execFileSync('ldns-keygen', ['-a', 'ECDSAP256SHA256', '-k', zone], { cwd: dir }).toString().trim();
}

export async function startValidatingResolver(zones: TestZoneFile[]): Promise<ValidatingResolver> {
  const dir = mkdtempSync(join(tmpdir(), 'unbound-'));
  const anchors: string[] = [];
  const authZones: string[] = [];
  for (const zone of zones) {
    const file = join(dir, `${zone.name}.zone`);
    writeFileSync(
      file,
      [
        `$ORIGIN ${zone.name}.`,
        '$TTL 300',
        `@ IN SOA ns.${zone.name}. admin.${zone.name}. 1 3600 600 86400 300`,
        `@ IN NS ns.${zone.name}.`,
        'ns IN A 127.0.0.1',
        ...zone.records,
        '',
      ].join('\n'),
    );
    let served = file;
    if (zone.kind !== 'unsigned') {
      const key = newKey(dir, zone.name);
      execFileSync('ldns-signzone', [file, key], { cwd: dir });
      served = `${file}.signed`;
      // A bogus zone's anchor is the DS of a key that never signed it.
      const anchorKey = zone.kind === 'bogus' ? newKey(dir, zone.name) : key;
      anchors.push(`  trust-anchor-file: "${join(dir, `${anchorKey}.ds`)}"`);
    }
    authZones.push(
      `auth-zone:\n  name: "${zone.name}"\n  zonefile: "${served}"\n  for-upstream: yes\n  for-downstream: no\n  fallback-enabled: no`,
    );
  }
  const port = 20_000 + Math.floor(Math.random() * 30_000);
  const config = join(dir, 'unbound.conf');
  writeFileSync(
    config,
    [
      'server:',
      '  interface: 127.0.0.1',
      `  port: ${port}`,
      '  do-daemonize: no',
      '  username: ""',
      '  chroot: ""',
      `  directory: "${dir}"`,
      '  pidfile: ""',
      '  use-syslog: no',
      '  logfile: ""',
      '  verbosity: 0',
      '  do-ip6: no',
      '  do-not-query-localhost: no',
      // unbound answers NXDOMAIN for the special-use .test itself unless told not to.
      '  local-zone: "test." nodefault',
      '  module-config: "validator iterator"',
      ...anchors,
      ...authZones,
      '',
    ].join('\n'),
  );
  const child: ChildProcess = spawn('unbound', ['-c', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const address = `127.0.0.1:${port}`;
  // Ready when it answers a question about one of its zones.
  const client = createDnsClient({ servers: [address], timeoutMs: 200 });
  const started = Date.now();
  for (;;) {
    const reply = await client.query(`ns.${zones[0].name}`, 'A');
    if (reply.kind !== 'timeout') break;
    if (child.exitCode !== null || Date.now() - started > 10_000)
      throw new Error(`unbound did not start: ${stderr} ${readdirSync(dir).join(' ')} ${readFileSync(config, 'utf8')}`);
  }
  return {
    address,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
