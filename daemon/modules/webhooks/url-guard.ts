// Keeps webhook deliveries away from the service's own network (SSRF). In production an endpoint
// must be https and every address its name resolves to must be public. The check runs when the
// endpoint is created and again before every attempt, and the attempt then connects to the very
// address that was checked (see resolveDeliveryTarget), so a DNS answer that changes between the
// check and the connection (DNS rebinding) cannot redirect us to a private address.
import { lookup, Resolver } from 'node:dns/promises';
import { DNS_TIMEOUT_MS } from '../domains/dns-lookup.ts';
import { BlockList, isIP } from 'node:net';
import type { Config } from '../../config.ts';

const NON_PUBLIC_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const NON_PUBLIC_V6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
];

const nonPublic = new BlockList();
for (const [network, prefix] of NON_PUBLIC_V4) nonPublic.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of NON_PUBLIC_V6) nonPublic.addSubnet(network, prefix, 'ipv6');

/** The 16 bytes of an IPv6 address (with or without a trailing dotted quad); null when malformed. */
export function ipv6Bytes(address: string): Uint8Array | null {
  let text = address
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/%.*$/, '');
  const quad = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (quad) {
    const parts = quad.slice(1).map(Number);
    if (parts.some((part) => part > 255)) return null;
    text =
      text.slice(0, quad.index) +
      `${((parts[0] << 8) | parts[1]).toString(16)}:${((parts[2] << 8) | parts[3]).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (half: string) => (half === '' ? [] : half.split(':'));
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if ((halves.length === 1 && missing !== 0) || missing < 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  const bytes = new Uint8Array(16);
  for (const [index, group] of all.entries()) {
    if (!/^[0-9a-f]{1,4}$/.test(group)) return null;
    const value = parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 255;
  }
  return bytes;
}

const dotted = (bytes: Uint8Array, from: number, xor = 0) =>
  Array.from(bytes.slice(from, from + 4), (byte) => byte ^ xor).join('.');
const zeros = (bytes: Uint8Array, from: number, to: number) => bytes.slice(from, to).every((byte) => byte === 0);

/**
 * The IPv4 addresses an IPv6 address carries, by the forms that route to them: IPv4-compatible
 * (::a.b.c.d), IPv4-mapped (::ffff:a.b.c.d) and IPv4-translated (::ffff:0:a.b.c.d), NAT64
 * (64:ff9b::/96), 6to4 (2002:AABB:CCDD::/16) and Teredo (2001:0::/32: server, and the client XORed
 * with 0xffffffff). Each must be public for the IPv6 address to count as public.
 */
export function embeddedIPv4(address: string): string[] {
  const bytes = ipv6Bytes(address);
  if (!bytes) return [];
  const found: string[] = [];
  if (zeros(bytes, 0, 10) && ((bytes[10] === 0 && bytes[11] === 0) || (bytes[10] === 0xff && bytes[11] === 0xff)))
    found.push(dotted(bytes, 12));
  if (zeros(bytes, 0, 8) && bytes[8] === 0xff && bytes[9] === 0xff && bytes[10] === 0 && bytes[11] === 0)
    found.push(dotted(bytes, 12));
  if (bytes[0] === 0 && bytes[1] === 0x64 && bytes[2] === 0xff && bytes[3] === 0x9b && zeros(bytes, 4, 12))
    found.push(dotted(bytes, 12));
  if (bytes[0] === 0x20 && bytes[1] === 0x02) found.push(dotted(bytes, 2));
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0 && bytes[3] === 0)
    found.push(dotted(bytes, 4), dotted(bytes, 12, 0xff));
  return found;
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !nonPublic.check(address, 'ipv4');
  if (family === 6) {
    if (embeddedIPv4(address).some((v4) => nonPublic.check(v4, 'ipv4'))) return false;
    return !nonPublic.check(address, 'ipv6');
  }
  return false;
}

export class UnsafeWebhookUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeWebhookUrlError';
  }
}

/** Private targets are allowed outside production, or when WEBHOOKS_ALLOW_PRIVATE=true. */
export function privateTargetsAllowed(config: Config): boolean {
  return config.nodeEnv !== 'production' || config.webhooksAllowPrivate;
}

/** Parses and checks the form of an endpoint URL (no DNS). Throws UnsafeWebhookUrlError. */
export function parseEndpointUrl(raw: string, config: Config): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeWebhookUrlError(`"${raw}" is not a valid absolute URL.`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new UnsafeWebhookUrlError('The URL must start with https:// (or http:// when WEBHOOKS_ALLOW_PRIVATE=true).');
  }
  if (!url.hostname) throw new UnsafeWebhookUrlError('The URL has no host name.');
  if (!privateTargetsAllowed(config) && url.protocol !== 'https:') {
    throw new UnsafeWebhookUrlError('Webhook URLs must use https in production.');
  }
  return url;
}

export interface DeliveryTarget {
  url: URL;
  /** Host name without IPv6 brackets: the Host header, the TLS server name and the certificate name. */
  hostname: string;
  /** The checked address the connection must go to. */
  address: string;
  family: 4 | 6;
}

export type HostResolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: HostResolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** DNS_SERVERS when set (the same resolvers domain checks use), else the system's. */
export function configuredResolver(config: Pick<Config, 'dnsServers'>): HostResolver {
  if (config.dnsServers.length === 0) return systemResolver;
  return async (hostname) => {
    const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 1 });
    resolver.setServers(config.dnsServers);
    const answers = await Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]);
    const addresses = answers.flatMap((answer, index) =>
      answer.status === 'fulfilled' ? answer.value.map((address) => ({ address, family: index === 0 ? 4 : 6 })) : [],
    );
    if (addresses.length === 0) throw new Error(`${hostname} does not resolve`);
    return addresses;
  };
}

/**
 * Resolves the endpoint's host and checks every address it resolves to (one private answer among
 * public ones is enough to refuse: the resolver could hand either to the next lookup).
 */
export async function resolveDeliveryTarget(
  raw: string,
  config: Config,
  resolve: HostResolver = configuredResolver(config),
): Promise<DeliveryTarget> {
  const url = parseEndpointUrl(raw, config);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: Array<{ address: string; family: number }>;
  if (isIP(hostname)) {
    addresses = [{ address: hostname, family: isIP(hostname) }];
  } else {
    try {
      addresses = await resolve(hostname);
    } catch {
      throw new UnsafeWebhookUrlError(`The host name "${hostname}" does not resolve.`);
    }
  }
  if (addresses.length === 0) throw new UnsafeWebhookUrlError(`The host name "${hostname}" does not resolve.`);
  if (!privateTargetsAllowed(config)) {
    const blocked = addresses.find((entry) => !isPublicAddress(entry.address));
    if (blocked) {
      throw new UnsafeWebhookUrlError(
        `"${hostname}" resolves to ${blocked.address}, a private, loopback or reserved address; only public addresses are allowed in production.`,
      );
    }
  }
  const chosen = addresses[0];
  return { url, hostname, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
