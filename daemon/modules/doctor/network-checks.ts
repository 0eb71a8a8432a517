// The doctor's view of the network direct delivery needs: a resolver that answers and validates
// DNSSEC, and outbound port 25 open to a real MX host. Both go through the MTA's own resolver
// (DNS_SERVERS) and to the MX of DOCTOR_PROBE_DOMAIN: in tests that is the test DNS server and an MX
// host on a loopback alias, so no test ever reaches a public address.
import net from 'node:net';
import { getServers } from 'node:dns';
import type { Config } from '../../config.ts';
import { recordData, type DnsClient } from '../../mta/dns-query.ts';
import { addressesOf } from '../../mta/ehlo-check.ts';
import type { DoctorCheck } from '../../../shared/schemas/doctor.ts';

export const PORT_25_TIMEOUT_MS = 10_000;

/** Public resolvers: shared by everyone, refused by DNS blocklists, and no DNSSEC the host controls. */
const PUBLIC_RESOLVERS = new Set(['8.8.8.8', '8.8.4.4', '1.1.1.1', '1.0.0.1', '9.9.9.9', '149.112.112.112']);

const UNBOUND_FIX =
  'Run a local validating resolver (unbound with auto-trust-anchor-file, listening on 127.0.0.1) and set DNS_SERVERS=127.0.0.1: it validates DNSSEC (DANE needs the AD flag), and DNS blocklists refuse queries that come through public resolvers.';

export function resolverNames(config: Pick<Config, 'dnsServers'>): string {
  return config.dnsServers.length > 0
    ? `DNS_SERVERS ${config.dnsServers.join(', ')}`
    : `the system resolver (${getServers().join(', ') || 'none in /etc/resolv.conf'})`;
}

export interface ProbeTarget {
  host: string;
  address: string;
}

/** Does the resolver answer, and find the MX of the probe domain? Answers the MX host to probe port 25 on. */
export async function checkResolver(
  dns: DnsClient,
  config: Pick<Config, 'dnsServers' | 'doctorProbeDomain'>,
): Promise<{ check: DoctorCheck; target: ProbeTarget | null }> {
  const resolver = resolverNames(config);
  const domain = config.doctorProbeDomain;
  const reply = await dns.query(domain, 'MX');
  const fail = (message: string, fix: string) => ({
    check: { name: 'resolver', ok: false, message, fix },
    target: null,
  });
  if (reply.kind === 'timeout' || reply.kind === 'error')
    return fail(
      `${resolver} did not answer the MX of ${domain} (${reply.kind === 'timeout' ? 'timeout' : reply.code}): every delivery would be deferred.`,
      `Check that the resolver runs and reaches the internet. ${UNBOUND_FIX}`,
    );
  if (reply.kind !== 'answer')
    return fail(
      `${resolver} answers ${reply.kind === 'nxdomain' ? 'NXDOMAIN' : 'no MX'} for ${domain}, a domain that receives mail: it does not see the real DNS.`,
      `Point DNS_SERVERS at a resolver that reaches the internet. ${UNBOUND_FIX}`,
    );
  const hosts = reply.answers
    .map((answer) => recordData<{ exchange: string; preference: number }>(answer))
    .sort((a, b) => a.preference - b.preference)
    .map((mx) => mx.exchange.replace(/\.$/, ''));
  let target: ProbeTarget | null = null;
  for (const host of hosts) {
    const { addresses } = await addressesOf(dns, host);
    const v4 = addresses.find((address) => net.isIPv4(address));
    if (v4 ?? addresses[0]) {
      target = { host, address: v4 ?? addresses[0] };
      break;
    }
  }
  const asked = config.dnsServers.length > 0 ? config.dnsServers : getServers();
  const publicOnes = asked.filter((server) => PUBLIC_RESOLVERS.has(server.replace(/:\d+$/, '')));
  const found = `${resolver} answers: MX of ${domain} is ${hosts.join(', ')}${target ? ` (${target.address})` : ''}.`;
  if (publicOnes.length > 0)
    return {
      check: {
        name: 'resolver',
        ok: true,
        message: `${found} ${publicOnes.join(', ')} is a public resolver.`,
        fix: UNBOUND_FIX,
      },
      target,
    };
  return { check: { name: 'resolver', ok: true, message: found }, target };
}

/** Does the resolver validate DNSSEC? A signed name must come back with the AD flag. A warning, not a failure: DANE is optional. */
export async function checkDnssec(
  dns: DnsClient,
  config: Pick<Config, 'dnsServers' | 'doctorDnssecProbe'>,
): Promise<DoctorCheck> {
  const resolver = resolverNames(config);
  const name = config.doctorDnssecProbe;
  const reply = await dns.query(name, 'SOA');
  if (reply.kind === 'error' && reply.code === 'ESERVFAIL')
    return {
      name: 'dnssec',
      ok: false,
      message: `${resolver} answers SERVFAIL for ${name}, a signed name: its validation is broken (a wrong trust anchor or clock).`,
      fix: `Check the resolver's trust anchor and the host's clock. ${UNBOUND_FIX}`,
    };
  if ((reply.kind === 'answer' || reply.kind === 'nodata' || reply.kind === 'nxdomain') && reply.authentic)
    return { name: 'dnssec', ok: true, message: `${resolver} validates DNSSEC (AD on ${name}): DANE is applied.` };
  return {
    name: 'dnssec',
    ok: true,
    message: `Warning: ${resolver} does not validate DNSSEC (no AD flag on ${name}, a signed name): DANE (TLSA) is not applied, so mail to DANE domains goes with opportunistic TLS only.`,
    fix: UNBOUND_FIX,
  };
}

/** Opens port 25 to the probe MX (bound to OUTBOUND_ADDRESS), waits for its 220 greeting, says QUIT. */
export function probePort25(
  target: ProbeTarget,
  localAddress: string | null,
  timeoutMs = PORT_25_TIMEOUT_MS,
): Promise<{ ok: true; localAddress: string; greeting: string } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: target.address, port: 25, localAddress: localAddress ?? undefined });
    let received = '';
    const finish = (result: Parameters<typeof resolve>[0]) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish({ ok: false, error: `no answer within ${timeoutMs / 1000} s` }), timeoutMs);
    socket.on('error', (error: NodeJS.ErrnoException) => finish({ ok: false, error: error.code ?? error.message }));
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      const line = received.split('\r\n')[0];
      if (!received.includes('\r\n')) return;
      socket.write('QUIT\r\n');
      if (line.startsWith('220')) finish({ ok: true, localAddress: socket.localAddress ?? '', greeting: line });
      else finish({ ok: false, error: `greeted with "${line.slice(0, 120)}"` });
    });
  });
}

export async function checkPort25(
  target: ProbeTarget | null,
  config: Pick<Config, 'doctorProbeDomain' | 'outboundAddress'>,
): Promise<{ check: DoctorCheck; localAddress: string | null }> {
  const domain = config.doctorProbeDomain;
  if (!target)
    return {
      check: {
        name: 'port-25',
        ok: false,
        message: `Not checked: no MX host of ${domain} could be resolved (see resolver).`,
        fix: 'Fix the resolver first.',
      },
      localAddress: null,
    };
  const result = await probePort25(target, config.outboundAddress);
  if (!result.ok)
    return {
      check: {
        name: 'port-25',
        ok: false,
        message: `Outbound port 25 to ${target.host} (${target.address}) did not open: ${result.error}. Most hosting providers block port 25 on new servers.`,
        fix: 'Ask the hosting provider to unblock outbound TCP port 25 for this server (most do it on request for a mail server with a PTR record), and check the host firewall (e.g. iptables -L OUTPUT).',
      },
      localAddress: null,
    };
  return {
    check: {
      name: 'port-25',
      ok: true,
      message: `Port 25 to ${target.host} (${target.address}) opens from ${result.localAddress}: ${result.greeting.slice(0, 80)}`,
    },
    localAddress: result.localAddress,
  };
}
