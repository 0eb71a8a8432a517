// Is this an address mail can leave from, here? (issue 48 §5) An IP pool address is bound as the local
// end of every connection to an MX host: an address that is not one host's unicast address (unspecified,
// broadcast, multicast, reserved) or that is only for documentation can never be, and an address this
// node does not hold fails each connection with EADDRNOTAVAIL. The first is refused whatever the node;
// the second is checked by binding a socket to the address (port 0: the system picks a free port) on the
// node that adds it, by `svc doctor` on each node (modules/doctor/pool-bind.ts), and by the MTA loop,
// which stops using an address it cannot bind (mta/attempt.ts).
import { BlockList, createServer, isIP } from 'node:net';
import { hostname } from 'node:os';

interface Range {
  network: string;
  prefix: number;
  why: string;
}

// IANA's special-purpose registries (RFC 6890): the ranges no host sends mail from.
const RANGES: Record<'ipv4' | 'ipv6', Range[]> = {
  ipv4: [
    { network: '0.0.0.0', prefix: 8, why: "the unspecified address ('this network', 0.0.0.0/8)" },
    { network: '255.255.255.255', prefix: 32, why: 'the broadcast address' },
    { network: '224.0.0.0', prefix: 4, why: 'a multicast address (224.0.0.0/4)' },
    { network: '240.0.0.0', prefix: 4, why: 'a reserved address (240.0.0.0/4)' },
    { network: '192.0.2.0', prefix: 24, why: 'a documentation address (TEST-NET-1, 192.0.2.0/24, RFC 5737)' },
    { network: '198.51.100.0', prefix: 24, why: 'a documentation address (TEST-NET-2, 198.51.100.0/24, RFC 5737)' },
    { network: '203.0.113.0', prefix: 24, why: 'a documentation address (TEST-NET-3, 203.0.113.0/24, RFC 5737)' },
  ],
  ipv6: [
    { network: '::', prefix: 128, why: 'the unspecified address (::)' },
    { network: 'ff00::', prefix: 8, why: 'a multicast address (ff00::/8)' },
    { network: '2001:db8::', prefix: 32, why: 'a documentation address (2001:db8::/32, RFC 3849)' },
  ],
};

/** Why `ip` can never be a source address, or null when it may be one (whether this node holds it is bindProblem's). */
export function sourceAddressProblem(ip: string): string | null {
  const family = isIP(ip);
  if (family === 0) return `${ip} is not an IPv4 or IPv6 address`;
  // An IPv4-mapped IPv6 address (::ffff:192.0.2.1) is the IPv4 address it carries.
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1] : undefined;
  const [address, type] = mapped
    ? [mapped, 'ipv4' as const]
    : [ip, family === 4 ? ('ipv4' as const) : ('ipv6' as const)];
  for (const range of RANGES[type]) {
    const list = new BlockList();
    list.addSubnet(range.network, range.prefix, type);
    if (list.check(address, type)) return `${ip} is ${range.why}: mail cannot be sent from it`;
  }
  return null;
}

/**
 * Binds a socket to `ip` (port 0) and closes it: null when this node can send from the address, else
 * why not (EADDRNOTAVAIL: no interface of this host has it).
 */
export function bindProblem(ip: string): Promise<string | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      resolve(`${ip} cannot be bound on node ${hostname()}: ${error.code ?? error.message}`);
    });
    server.listen({ host: ip, port: 0, exclusive: true }, () => server.close(() => resolve(null)));
  });
}

/** A connection error that is the local bind failing (the source address, not the destination). */
export function isBindFailure(error: unknown): boolean {
  const { syscall, code, message } = (error ?? {}) as { syscall?: string; code?: string; message?: string };
  return syscall === 'bind' || code === 'EADDRNOTAVAIL' || /\bbind EADDRNOTAVAIL\b/.test(message ?? '');
}
