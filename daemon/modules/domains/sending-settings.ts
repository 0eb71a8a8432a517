// What the records a customer publishes must point at: our SPF mechanism, the return-path target and
// the DMARC report address. Platform settings decide (spfInclude, returnPathDomain); an unset
// spfInclude falls back to PUBLIC_URL's host, an unset returnPathDomain means no return-path record.
import { isIP, isIPv4 } from 'node:net';
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import { getPlatformSettings } from '../../db/platform-settings.ts';
import { dmarcReportAddress } from '../../mail/addresses.ts';
import { privateAddressKind } from '../../ehlo-name.ts';
import { selectPoolIps } from '../ip-pools/sql.ts';

export interface SendingDnsSettings {
  /**
   * The SPF mechanism(s) that authorise our relays: `include:_spf.example.net`, `ip4:203.0.113.7` or `ip6:…`;
   * with direct delivery, one per outbound address, separated by spaces (`ip4:203.0.113.7 ip4:203.0.113.8`).
   */
  spfMechanism: string;
  /** Said beside the SPF record when the addresses it names are private (receivers never see them), else null. */
  spfNote?: string | null;
  /** Where `bounces.<domain>` must point, or null when bounces are not routed through customer domains. */
  returnPath: { type: 'CNAME'; target: string } | { type: 'MX'; target: string; priority: number } | null;
  /** `mailto:` URI for the recommended DMARC record; null means "an address at the customer's domain". */
  dmarcRua: string | null;
}

/** The SPF mechanism when the platform names no include: PUBLIC_URL's address, or `include:_spf.<host>`. */
export function defaultSpfMechanism(config: Pick<Config, 'publicUrl'>): string {
  const host = new URL(config.publicUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const family = isIP(host);
  if (family === 4) return `ip4:${host}`;
  if (family === 6) return `ip6:${host}`;
  return `include:_spf.${host}`;
}

/**
 * With DELIVERY=direct the addresses mail leaves from: OUTBOUND_ADDRESS and every IP pool address (the
 * nodes share the pools). Empty when neither is set: the system chooses, and PUBLIC_URL is the best guess.
 */
async function outboundAddresses(
  sequelize: Sequelize,
  config: Partial<Pick<Config, 'delivery' | 'outboundAddress'>>,
): Promise<string[]> {
  if (config.delivery !== 'direct') return [];
  const pools = await selectPoolIps(sequelize);
  return [...new Set([...(config.outboundAddress ? [config.outboundAddress] : []), ...pools])].filter(isIP);
}

function privateNote(mechanisms: string): string | null {
  const privates = mechanisms
    .split(' ')
    .map((mechanism) => mechanism.replace(/^ip[46]:/, ''))
    .filter((ip) => isIP(ip) && privateAddressKind(ip) !== null);
  if (privates.length === 0) return null;
  return `${privates.map((ip) => `${ip} is ${privateAddressKind(ip)}`).join('; ')}: receivers see the public address a NAT gives it, so this SPF record authorises nothing they check. Set OUTBOUND_ADDRESS (or the IP pools) to the public addresses mail leaves from.`;
}

export async function loadSendingDnsSettings(
  sequelize: Sequelize,
  config: Pick<Config, 'publicUrl' | 'smtpInboundPort'> & Partial<Pick<Config, 'delivery' | 'outboundAddress'>>,
): Promise<SendingDnsSettings> {
  const platform = await getPlatformSettings(sequelize);
  const outbound = platform.spfInclude ? [] : await outboundAddresses(sequelize, config);
  const spfMechanism = platform.spfInclude
    ? `include:${platform.spfInclude.toLowerCase()}`
    : outbound.length > 0
      ? outbound.map((ip) => `${isIPv4(ip) ? 'ip4' : 'ip6'}:${ip}`).join(' ')
      : defaultSpfMechanism(config);
  return {
    spfMechanism,
    spfNote: privateNote(spfMechanism),
    returnPath: platform.returnPathDomain ? { type: 'CNAME', target: platform.returnPathDomain.toLowerCase() } : null,
    // Reports come to our DMARC mailbox only while something receives them.
    dmarcRua: dmarcMailto(config),
  };
}

function dmarcMailto(config: Pick<Config, 'publicUrl' | 'smtpInboundPort'>): string | null {
  const address = dmarcReportAddress(config);
  return address ? `mailto:${address}` : null;
}
