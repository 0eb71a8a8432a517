// Which mailbox provider runs a destination, told by its MX host names (KumoMTA's "provider" match,
// docs/mta.md): gmail.com, googlemail.com and every Google Workspace domain share Google's MX hosts
// and Google's patience, so shaping (connections, messages per connection, rate), warm-up ceilings
// and reactions are kept per provider, not per recipient domain. The shipped values follow what the
// providers publish or what KumoMTA's community shaping file uses; platform admins override them.
import { DEFAULT_POOL_LIMITS } from './pool.ts';

export interface ProviderShape {
  /** Stable key: 'google', 'yahoo', 'microsoft', 'apple', 'default', or an admin-defined one. */
  key: string;
  label: string;
  /**
   * MX host name patterns: `*.example.net` matches any name ending in `.example.net`; anything else
   * matches the whole name. Lower case, no trailing dot.
   */
  mxPatterns: string[];
  /** Connections open at once to this provider, from one node. */
  maxConnections: number;
  maxMessagesPerConnection: number;
  /** Messages per minute to this provider from one node; null = no rate limit beyond connections. */
  messagesPerMinute: number | null;
}

export const DEFAULT_PROVIDER_KEY = 'default';

export const DEFAULT_PROVIDERS: readonly ProviderShape[] = [
  {
    key: 'google',
    label: 'Google (Gmail, Workspace)',
    mxPatterns: ['*.google.com', '*.googlemail.com', 'smtp.google.com', '*.smtp.goog'],
    maxConnections: 5,
    maxMessagesPerConnection: 50,
    messagesPerMinute: null,
  },
  {
    key: 'yahoo',
    label: 'Yahoo and AOL',
    mxPatterns: ['*.yahoodns.net', '*.yahoo.com', '*.aol.com'],
    maxConnections: 5,
    maxMessagesPerConnection: 20,
    messagesPerMinute: null,
  },
  {
    key: 'microsoft',
    label: 'Microsoft (Outlook.com, Exchange Online)',
    mxPatterns: ['*.protection.outlook.com', '*.hotmail.com', '*.outlook.com'],
    maxConnections: 8,
    maxMessagesPerConnection: 100,
    messagesPerMinute: null,
  },
  {
    key: 'apple',
    label: 'Apple (iCloud)',
    mxPatterns: ['*.mail.icloud.com', '*.icloud.com', '*.me.com'],
    maxConnections: 5,
    maxMessagesPerConnection: 50,
    messagesPerMinute: null,
  },
  {
    key: DEFAULT_PROVIDER_KEY,
    label: 'Any other destination',
    mxPatterns: [],
    maxConnections: DEFAULT_POOL_LIMITS.maxConnections,
    maxMessagesPerConnection: 100,
    messagesPerMinute: null,
  },
];

export function patternMatches(pattern: string, hostname: string): boolean {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (pattern.startsWith('*.')) return name.endsWith(pattern.slice(1));
  return name === pattern;
}

/**
 * The provider whose patterns match the most preferred MX host that any pattern matches (a backup MX
 * run by someone else does not change who the destination is), else the `default` provider.
 */
export function providerOf(mxHostnames: readonly string[], providers: readonly ProviderShape[]): ProviderShape {
  for (const hostname of mxHostnames)
    for (const provider of providers)
      if (provider.mxPatterns.some((pattern) => patternMatches(pattern, hostname))) return provider;
  return providers.find((provider) => provider.key === DEFAULT_PROVIDER_KEY) ?? DEFAULT_PROVIDERS.at(-1)!;
}
