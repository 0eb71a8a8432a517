// The name the MTA says in EHLO when EHLO_NAME is not set. Receivers compare it with the PTR of the
// connecting address (Gmail and Microsoft refuse mail without forward-confirmed reverse DNS), and RFC
// 5321 §4.1.3 wants a bare address written as a literal (`[192.0.2.7]`, `[IPv6:2001:db8::7]`): a bare
// `192.0.2.7` is a syntax error many servers refuse. The default, in order:
//   1. PUBLIC_URL's host when it is a fully qualified name (the name the operator already published);
//   2. the host's own name (os.hostname()) when it is fully qualified;
//   3. the address literal of OUTBOUND_ADDRESS, else of PUBLIC_URL's address, else of 127.0.0.1.
// A short host name is not qualified through the resolver: on a rented host that answer is the
// provider's internal name (vps123.provider.internal), which no receiver can confirm, and boot would
// wait on DNS. Boot and `svc doctor` warn whenever the name in use is not an FQDN with FCrDNS.
import { BlockList, isIP, isIPv6 } from 'node:net';

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** A DNS name of two labels or more, not localhost, not an address: what EHLO should say. */
export function isFullyQualifiedName(name: string): boolean {
  const bare = name.replace(/\.$/, '');
  if (bare.length > 253 || isIP(bare) || bare.startsWith('[')) return false;
  const labels = bare.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return false;
  const last = labels.at(-1)!.toLowerCase();
  // A numeric top-level label is an address written oddly; localhost and .localdomain reach no one.
  return !/^\d+$/.test(last) && last !== 'localhost' && last !== 'localdomain' && last !== 'local';
}

/** `[192.0.2.7]` or `[IPv6:2001:db8::7]` (RFC 5321 §4.1.3). */
export function addressLiteral(ip: string): string {
  return isIPv6(ip) ? `[IPv6:${ip}]` : `[${ip}]`;
}

export function defaultEhloName(options: {
  publicUrl: string;
  outboundAddress: string | null;
  hostname: string;
}): string {
  const publicHost = new URL(options.publicUrl).hostname.replace(/^\[|\]$/g, '');
  if (isFullyQualifiedName(publicHost)) return publicHost.toLowerCase();
  if (isFullyQualifiedName(options.hostname)) return options.hostname.toLowerCase().replace(/\.$/, '');
  if (options.outboundAddress) return addressLiteral(options.outboundAddress);
  return addressLiteral(isIP(publicHost) ? publicHost : '127.0.0.1');
}

const PRIVATE_RANGES: [kind: string, network: string, prefix: number, family: 'ipv4' | 'ipv6'][] = [
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['private (RFC 1918)', '10.0.0.0', 8, 'ipv4'],
  ['private (RFC 1918)', '172.16.0.0', 12, 'ipv4'],
  ['private (RFC 1918)', '192.168.0.0', 16, 'ipv4'],
  ['shared (carrier-grade NAT, RFC 6598)', '100.64.0.0', 10, 'ipv4'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['unique local (ULA, RFC 4193)', 'fc00::', 7, 'ipv6'],
  ['link-local', 'fe80::', 10, 'ipv6'],
];

/**
 * What kind of non-public address `ip` is (loopback, RFC 1918, ULA…), or null for a public one: mail
 * from such an address reaches receivers from whatever public address a NAT gives it, so SPF and PTR
 * naming it prove nothing to them.
 */
export function privateAddressKind(ip: string): string | null {
  const family = isIPv6(ip) ? 'ipv6' : isIP(ip) === 4 ? 'ipv4' : null;
  if (!family) return null;
  const mapped = family === 'ipv6' ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1] : undefined;
  if (mapped) return privateAddressKind(mapped);
  for (const [kind, network, prefix, rangeFamily] of PRIVATE_RANGES) {
    if (rangeFamily !== family) continue;
    const list = new BlockList();
    list.addSubnet(network, prefix, rangeFamily);
    if (list.check(ip, family)) return kind;
  }
  return null;
}
