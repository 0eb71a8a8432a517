// Postfix for `npm run bench:mta`: Debian's package (apt-get install postfix), run as a separate
// instance (`postfix -c <dir>`) with its own config and queue directory under /tmp, the default queue
// manager (qmgr) and its default concurrency, smtpd on 127.0.0.1:<free port> for the injector. Each
// bench domain is routed by transport_maps to `smtp:[127.0.0.x]:25`: Postfix reads /etc/resolv.conf
// (port 53), not the bench DNS server on its random port, so it makes no MX look-ups at all, an
// advantage to Postfix that the report states. The retry timers are shortened to svc's
// (SEND_RETRY_BASE_MS of the bench) so the 451-deferred messages come back as soon in both columns.
// smtpd offers STARTTLS with the bench's pair (bench/mta-tls.ts), as every SMTP column does.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DESTINATIONS } from './mta-message.ts';
import type { BenchTls } from './mta-tls.ts';

export const POSTFIX_BIN = '/usr/sbin/postfix';

export function postfixInstalled(): boolean {
  return existsSync(POSTFIX_BIN) && existsSync('/usr/lib/postfix/sbin/master');
}

export interface PostfixInstance {
  port: number;
  version: string;
  stop(): void;
}

const SERVICES = `
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
`;

/** `milter`: a signing milter (OpenDKIM, bench/mta-opendkim.ts) for what smtpd receives; none by default. */
export function startPostfix(
  port: number,
  retrySeconds: number,
  tls: BenchTls,
  milter: string | null = null,
): PostfixInstance {
  const base = mkdtempSync(join(tmpdir(), 'svc-bench-postfix-'));
  // Postfix's daemons run as the postfix user: they must reach the queue under this directory.
  chmodSync(base, 0o755);
  const conf = join(base, 'conf');
  mkdirSync(conf);
  mkdirSync(join(base, 'queue'));
  mkdirSync(join(base, 'data'));
  execFileSync('chown', ['postfix:postfix', join(base, 'data')]);
  writeFileSync(
    join(conf, 'transport'),
    DESTINATIONS.map((d) => `${d.domain} smtp:[${d.address}]:25`).join('\n') + '\n',
  );
  writeFileSync(
    join(conf, 'main.cf'),
    `compatibility_level = 3.6
queue_directory = ${join(base, 'queue')}
data_directory = ${join(base, 'data')}
mail_owner = postfix
setgid_group = postdrop
myhostname = postfix.mta-bench.test
mydomain = mta-bench.test
mydestination =
local_recipient_maps =
local_transport = error:local delivery is off
alias_maps =
alias_database =
relay_domains =
relayhost =
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
transport_maps = texthash:${join(conf, 'transport')}
maillog_file = ${join(base, 'postfix.log')}
maillog_file_prefixes = ${base}
smtp_tls_security_level = none
smtpd_tls_security_level = may
smtpd_tls_cert_file = ${tls.certFile}
smtpd_tls_key_file = ${tls.keyFile}
message_size_limit = 52428800
biff = no
append_dot_mydomain = no
smtputf8_enable = no
minimal_backoff_time = ${retrySeconds}s
maximal_backoff_time = ${retrySeconds * 2}s
queue_run_delay = ${retrySeconds}s
${milter ? `smtpd_milters = ${milter}\nmilter_default_action = tempfail\n` : ''}`,
  );
  writeFileSync(join(conf, 'master.cf'), `127.0.0.1:${port} inet n - n - - smtpd\n${SERVICES.trim()}\n`);
  const postfix = (...args: string[]) =>
    execFileSync(POSTFIX_BIN, ['-c', conf, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  postfix('check');
  postfix('start');
  const version = execFileSync('/usr/sbin/postconf', ['-c', conf, '-h', 'mail_version']).toString().trim();
  return {
    port,
    version,
    stop() {
      try {
        postfix('abort');
      } catch {
        // Already stopped.
      }
      rmSync(base, { recursive: true, force: true });
    },
  };
}
