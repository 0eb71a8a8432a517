// Haraka for `npm run bench:mta`, the third column, when it is installed outside the repo:
//   mkdir -p /tmp/haraka-bench && cd /tmp/haraka-bench && npm init -y && npm install Haraka
// (or HARAKA_BENCH_DIR naming another such directory). One Haraka process (its default: no cluster),
// listening on 127.0.0.1:<free port>; two bench plugins: every connection relays (the injector is the
// one client), and get_mx answers the MX of each domain from the bench DNS server (a real MX and A
// query there, as svc makes). Outbound is Haraka's own (its default concurrency, no connection reuse
// in Haraka 3), no DKIM plugin: the messages come signed. Retries after `retrySeconds` (its minimum is 5 s).
// STARTTLS with the bench's pair (bench/mta-tls.ts): Haraka's tls plugin, as every SMTP column offers it.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { portTakesConnections, spawnPeer, waitForPeerReady } from './children.ts';
import type { BenchTls } from './mta-tls.ts';

export const HARAKA_BENCH_DIR = process.env.HARAKA_BENCH_DIR ?? '/tmp/haraka-bench';
// npm installs the package under the name it was asked for: `npm install Haraka` (older guides) makes
// node_modules/Haraka, `npm install haraka` (its name on the registry since 3.x) node_modules/haraka.
const harakaRoot = () =>
  ['Haraka', 'haraka']
    .map((name) => join(HARAKA_BENCH_DIR, 'node_modules', name))
    .find((root) => existsSync(join(root, 'bin', 'haraka'))) ?? join(HARAKA_BENCH_DIR, 'node_modules', 'haraka');

export const HARAKA_HOW_TO = 'mkdir -p /tmp/haraka-bench && cd /tmp/haraka-bench && npm init -y && npm install haraka';

export function harakaInstalled(): boolean {
  return existsSync(join(harakaRoot(), 'bin', 'haraka'));
}

export interface HarakaInstance {
  port: number;
  version: string;
  stop(): Promise<void>;
}

// The reverse look-up of the client is answered here: the machine's resolver may not answer at all
// (Postfix finds 127.0.0.1 in /etc/hosts; Haraka asks DNS and would wait for its time-out).
const RELAY_PLUGIN = `// bench: the injector on loopback may relay.
exports.hook_connect_init = function (next, connection) {
  connection.relaying = true;
  next();
};
exports.hook_lookup_rdns = function (next) {
  next(OK, 'localhost');
};
`;

const MX_PLUGIN = (dnsServer: string) => `// bench: MX and A of each domain from the bench DNS server.
const { Resolver } = require('node:dns').promises;
const resolver = new Resolver({ timeout: 2000, tries: 2 });
resolver.setServers([${JSON.stringify(dnsServer)}]);
exports.hook_get_mx = async function (next, hmail, domain) {
  try {
    const mxs = (await resolver.resolveMx(domain)).sort((a, b) => a.priority - b.priority);
    const hosts = [];
    for (const mx of mxs)
      for (const address of await resolver.resolve4(mx.exchange))
        hosts.push({ exchange: address, priority: mx.priority, port: 25 });
    next(OK, hosts);
  } catch (error) {
    next(DENYSOFT, String(error));
  }
};
`;

export async function startHaraka(
  port: number,
  dnsServer: string,
  retrySeconds: number,
  tls: BenchTls,
): Promise<HarakaInstance> {
  const base = mkdtempSync(join(tmpdir(), 'svc-bench-haraka-'));
  // Haraka's own defaults (connection.ini and the rest, as `haraka -i` installs them), then the bench's.
  cpSync(join(harakaRoot(), 'config'), join(base, 'config'), { recursive: true });
  mkdirSync(join(base, 'plugins'));
  mkdirSync(join(base, 'queue'));
  const config = (name: string, text: string) => writeFileSync(join(base, 'config', name), text);
  config('smtp.ini', `listen=127.0.0.1:${port}\n`);
  config('plugins', 'tls\nbench_relay\nbench_mx\n');
  // Where the tls plugin looks by default (config/tls_key.pem, config/tls_cert.pem).
  cpSync(tls.keyFile, join(base, 'config', 'tls_key.pem'));
  cpSync(tls.certFile, join(base, 'config', 'tls_cert.pem'));
  config('log.ini', '[main]\nlevel=warn\n');
  config('me', 'haraka.mta-bench.test\n');
  config(
    'outbound.ini',
    `enable_tls=false\nlocal_mx_ok=true\ninet_prefer=v4\ntemp_fail_intervals=${Math.max(5, retrySeconds)}s*5\n`,
  );
  writeFileSync(join(base, 'plugins', 'bench_relay.js'), RELAY_PLUGIN);
  writeFileSync(join(base, 'plugins', 'bench_mx.js'), MX_PLUGIN(dnsServer));
  const peer = spawnPeer('Haraka', process.execPath, [join(harakaRoot(), 'bin', 'haraka'), '-c', base], { cwd: base });
  const { child } = peer;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    await waitForPeerReady(peer, () => portTakesConnections(port), { what: 'listen', timeoutMs: 60_000 });
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
  const version = (JSON.parse(readFileSync(join(harakaRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  return {
    port,
    version,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}
