// Keeps webhook deliveries away from the service's own network (SSRF). In production an endpoint
// must be https and every address its name resolves to must be public. The check runs when the
// endpoint is created and again before every attempt, and the attempt then connects to the very
// address that was checked (see resolveDeliveryTarget), so a DNS answer that changes between the
// check and the connection (DNS rebinding) cannot redirect us to a private address.
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { Config } from '../../config.ts';

const NON_PUBLIC_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
];
const NON_PUBLIC_V6: Array<[string, number]> = [
  ['::', 128], ['::1', 128], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
];

const nonPublic = new BlockList();
for (const [network, prefix] of NON_PUBLIC_V4) nonPublic.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of NON_PUBLIC_V6) nonPublic.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address hidden in an IPv4-mapped, IPv4-compatible or NAT64 IPv6 address, if any. */
function embeddedIPv4(address: string): string | null {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = parseInt(hex[1], 16);
    const low = parseInt(hex[2], 16);
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  return null;
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !nonPublic.check(address, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIPv4(address);
    if (v4 !== null) return !nonPublic.check(v4, 'ipv4');
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

/**
 * Resolves the endpoint's host and checks every address it resolves to (one private answer among
 * public ones is enough to refuse: the resolver could hand either to the next lookup).
 */
export async function resolveDeliveryTarget(raw: string, config: Config, resolve: HostResolver = systemResolver): Promise<DeliveryTarget> {
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
