// What the records a customer publishes must point at: our SPF mechanism, the return-path target and
// the DMARC report address. The platform settings decide; without them they follow PUBLIC_URL's host.
import { isIP } from 'node:net';
import type { Sequelize } from 'sequelize';
import type { Config } from '../../config.ts';

export interface SendingDnsSettings {
  /** The SPF mechanism that authorises our relays: `include:_spf.example.net`, `ip4:203.0.113.7` or `ip6:…`. */
  spfMechanism: string;
  /** Where `bounces.<domain>` must point, or null when bounces are not routed through customer domains. */
  returnPath: { type: 'CNAME'; target: string } | { type: 'MX'; target: string; priority: number } | null;
  /** `mailto:` URI for the recommended DMARC record; null means "an address at the customer's domain". */
  dmarcRua: string | null;
}

export const RETURN_PATH_LABEL = 'bounces';

export function defaultSendingDnsSettings(config: Pick<Config, 'publicUrl'>): SendingDnsSettings {
  const host = new URL(config.publicUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const family = isIP(host);
  if (family === 4) return { spfMechanism: `ip4:${host}`, returnPath: null, dmarcRua: null };
  if (family === 6) return { spfMechanism: `ip6:${host}`, returnPath: null, dmarcRua: null };
  return { spfMechanism: `include:_spf.${host}`, returnPath: { type: 'CNAME', target: `${RETURN_PATH_LABEL}.${host}` }, dmarcRua: null };
}

export async function loadSendingDnsSettings(_sequelize: Sequelize, config: Pick<Config, 'publicUrl'>): Promise<SendingDnsSettings> {
  return defaultSendingDnsSettings(config);
}
