// Which TLS each MX host of a destination gets, in the order RFC 8461 §2 sets: DANE where the host has
// authenticated TLSA records behind a signed MX, else the domain's MTA-STS policy, else opportunistic
// STARTTLS. The answer is a TlsPlan for the pool plus, per host, the policy TLS-RPT reports under.
import { checkServerIdentity, type TLSSocket } from 'node:tls';
import { lookupTlsa, verifyDanePeer, type DaneLookup } from './dane.ts';
import type { DnsClient } from './dns-query.ts';
import { stsAllowsHost, StsPolicyCache, type StsLookup } from './mta-sts.ts';
import type { Route } from './mx.ts';
import type { TlsDemand } from './connection.ts';
import type { TlsPlan } from './pool.ts';

/** The policy a host was tried under, in TLS-RPT's terms (RFC 8460 §4.3). */
export interface AppliedPolicy {
  type: 'tlsa' | 'sts' | 'no-policy-found';
  /** TLSA records or policy lines, as TLS-RPT's `policy-string`. */
  strings: string[];
  /** The domain the policy belongs to (`policy-domain`). */
  domain: string;
  /** A failure met before connecting (policy fetch, TLSA look-up), for `failure-details`. */
  lookupFailure: string | null;
}

export interface DestinationTls {
  plan: TlsPlan;
  policyOf(host: string): AppliedPolicy;
}

// RFC 8460 §4.3 result types for node's certificate verdicts.
function webPkiFailure(socket: TLSSocket, host: string): string | null {
  if (!socket.authorized) {
    // A code string for chain problems; an Error (ERR_TLS_CERT_ALTNAME_INVALID) for a name that does not match.
    const problem = socket.authorizationError as unknown;
    const code = String((problem as { code?: string })?.code ?? problem ?? '');
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'certificate-host-mismatch';
    if (code === 'CERT_HAS_EXPIRED') return 'certificate-expired';
    if (/SELF_SIGNED|UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY/.test(code)) return 'certificate-not-trusted';
    return 'validation-failure';
  }
  return checkServerIdentity(host, socket.getPeerCertificate()) ? 'certificate-host-mismatch' : null;
}

const OPPORTUNISTIC: TlsDemand = { mode: 'opportunistic', tls: { rejectUnauthorized: false } };

/**
 * For a TLS report mail (RFC 8460 §5.3): delivered despite any TLS failure, so STARTTLS when offered,
 * unchecked, whatever policy the destination publishes; its sessions are not counted in the next report.
 */
export function reportMailTls(domain: string): DestinationTls {
  return {
    plan: () => OPPORTUNISTIC,
    policyOf: () => ({ type: 'no-policy-found', domain, strings: [], lookupFailure: null }),
  };
}

export class TlsPolicy {
  readonly sts: StsPolicyCache;

  /** `ca`: trusted roots for MTA-STS (policy hosts and MX hosts); unset = node's bundled roots. */
  constructor(
    private readonly dns: DnsClient,
    private readonly options: { ca?: string[] } = {},
  ) {
    this.sts = new StsPolicyCache(dns, { ca: options.ca });
  }

  async forDestination(domain: string, route: Extract<Route, { kind: 'hosts' }>): Promise<DestinationTls> {
    const [sts, dane] = await Promise.all([
      this.sts.lookup(domain),
      // RFC 7672 §2.2.1: TLSA records count only behind an MX RRset that validated.
      route.authentic
        ? Promise.all(route.hosts.map((host) => lookupTlsa(this.dns, host.name)))
        : route.hosts.map((): DaneLookup => ({ kind: 'none' })),
    ]);
    const byHost = new Map(route.hosts.map((host, index) => [host.name, dane[index]]));
    const demandFor = (name: string): TlsDemand | { refuse: string } => {
      const tlsa = byHost.get(name) ?? { kind: 'none' };
      if (tlsa.kind === 'failed') return { refuse: tlsa.detail };
      if (tlsa.kind === 'dane')
        return {
          mode: 'required',
          tls: { rejectUnauthorized: false, servername: name },
          verifyPeer: tlsa.usable.length > 0 ? (socket) => verifyDanePeer(socket, tlsa.usable, name) : undefined,
        };
      return this.stsDemand(sts, name);
    };
    return {
      plan: (host) => demandFor(host.name),
      policyOf: (name) => appliedPolicy(domain, byHost.get(name) ?? { kind: 'none' }, sts),
    };
  }

  private stsDemand(sts: StsLookup, name: string): TlsDemand | { refuse: string } {
    if (sts.kind !== 'policy' || sts.policy.mode === 'none') return OPPORTUNISTIC;
    const checked: TlsDemand = {
      mode: sts.policy.mode === 'enforce' ? 'required' : 'opportunistic',
      // Verified by hand in verifyPeer so that a failure is named in RFC 8460's terms.
      tls: { rejectUnauthorized: false, servername: name, ...(this.options.ca ? { ca: this.options.ca } : {}) },
      verifyPeer: (socket) => webPkiFailure(socket, name),
      reportOnly: sts.policy.mode === 'testing',
    };
    // testing: an unlisted host is still used (and its TLS still checked and reported).
    if (sts.policy.mode === 'enforce' && !stsAllowsHost(sts.policy, name))
      return { refuse: `MTA-STS: ${name} is not an MX host the policy lists` };
    return checked;
  }
}

function appliedPolicy(domain: string, tlsa: DaneLookup, sts: StsLookup): AppliedPolicy {
  if (tlsa.kind === 'dane')
    return {
      type: 'tlsa',
      domain,
      strings: tlsa.all.map((r) => `${r.usage} ${r.selector} ${r.matchingType} ${r.data}`),
      lookupFailure: null,
    };
  if (tlsa.kind === 'failed') return { type: 'tlsa', domain, strings: [], lookupFailure: tlsa.failure };
  if (sts.kind === 'policy' && sts.policy.mode !== 'none')
    return { type: 'sts', domain, strings: sts.policy.lines, lookupFailure: null };
  if (sts.kind === 'failed') return { type: 'sts', domain, strings: [], lookupFailure: sts.failure };
  return { type: 'no-policy-found', domain, strings: [], lookupFailure: null };
}
