// The consumer mail domains whose provider is known without looking at MX hosts: how an outcome is
// placed when no MTA saw the domain's MX hosts (mail through a relay, a complaint for a domain never
// delivered to directly). The keys are mta/providers.ts's.
const WELL_KNOWN: Record<string, string> = {
  'gmail.com': 'google',
  'googlemail.com': 'google',
  'yahoo.com': 'yahoo',
  'yahoo.co.uk': 'yahoo',
  'yahoo.fr': 'yahoo',
  'yahoo.de': 'yahoo',
  'ymail.com': 'yahoo',
  'rocketmail.com': 'yahoo',
  'aol.com': 'yahoo',
  'outlook.com': 'microsoft',
  'hotmail.com': 'microsoft',
  'hotmail.co.uk': 'microsoft',
  'hotmail.fr': 'microsoft',
  'live.com': 'microsoft',
  'msn.com': 'microsoft',
  'icloud.com': 'apple',
  'me.com': 'apple',
  'mac.com': 'apple',
};

/** The provider key of a well-known consumer domain, or null. */
export function wellKnownProviderOf(domain: string): string | null {
  return WELL_KNOWN[domain.toLowerCase()] ?? null;
}
