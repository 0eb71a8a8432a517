// What the records a customer publishes must point at: our SPF mechanism, the return-path target and
// the DMARC report address. Platform settings decide (spfInclude, returnPathDomain); an unset
// spfInclude falls back to PUBLIC_URL's host, an unset returnPathDomain means no return-path record.
import { isIP } from 'node:net';
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';
import { getPlatformSettings } from '../../db/platform-settings.ts';
import { dmarcReportAddress } from '../../mail/addresses.ts';

export interface SendingDnsSettings {
  /** The SPF mechanism that authorises our relays: `include:_spf.example.net`, `ip4:203.0.113.7` or `ip6:…`. */
  spfMechanism: string;
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

export async function loadSendingDnsSettings(
  sequelize: Sequelize,
  config: Pick<Config, 'publicUrl' | 'smtpInboundPort'>,
): Promise<SendingDnsSettings> {
  const platform = await getPlatformSettings(sequelize);
  return {
    spfMechanism: platform.spfInclude ? `include:${platform.spfInclude.toLowerCase()}` : defaultSpfMechanism(config),
    returnPath: platform.returnPathDomain ? { type: 'CNAME', target: platform.returnPathDomain.toLowerCase() } : null,
    // Reports come to our DMARC mailbox only while something receives them.
    dmarcRua: dmarcMailto(config),
  };
}

function dmarcMailto(config: Pick<Config, 'publicUrl' | 'smtpInboundPort'>): string | null {
  const address = dmarcReportAddress(config);
  return address ? `mailto:${address}` : null;
}
