// Where a domain's mail goes (RFC 5321 §5.1): its MX hosts by preference, each with its addresses;
// the domain itself when it has no MX (the implicit MX); nowhere when it publishes a null MX (RFC 7505)
// or does not exist. A look-up that did not answer is a deferral, never a reason to fall back to the
// domain's A record (Postal #2833: a timed-out MX look-up delivered to the web server). Routes are
// cached by the smallest TTL of the answers they were built from.
import type { Answer } from 'dns-packet';
import { TtlCache } from '../ttl-cache.ts';
import type { NegativeAnswers } from './resolver-health.ts';
import {
  cacheSeconds,
  MAXIMUM_CACHE_SECONDS,
  MINIMUM_CACHE_SECONDS,
  minimumTtl,
  recordData,
  type DnsClient,
  type DnsReply,
} from './dns-query.ts';

export interface MxHost {
  /** The exchange name, lower case without the trailing dot (what MTA-STS and DANE match against). */
  name: string;
  priority: number;
  /** IPv4 then IPv6 addresses, in the order to try. */
  addresses: string[];
}

export type Route =
  /** Hosts in the order to try them: by preference, equal preferences shuffled (RFC 5321 §5.1). */
  | {
      kind: 'hosts';
      hosts: MxHost[];
      implicit: boolean;
      ttlSeconds: number;
      /** The MX answer came validated (AD) from the resolver: the condition for DANE (RFC 7672 §2.2.1). */
      authentic: boolean;
    }
  /**
   * Never deliverable: the domain does not exist, says it takes no mail, or its MX hosts do not exist.
   * `negative`: told by an answer that something does not exist, which a broken resolver gives too
   * (believed only through mta/resolver-health.ts); a null MX is a record, believed as it is.
   */
  | { kind: 'undeliverable'; reason: string; enhancedCode: string; negative: boolean }
  /** Not decidable now (timeout, SERVFAIL): try again later. */
  | { kind: 'deferred'; reason: string };

/** A permanent answer is kept this long: long enough to spare a burst, short enough to notice a fix. */
const UNDELIVERABLE_TTL_SECONDS = 300;

function deferral(what: string, reply: Extract<DnsReply, { kind: 'timeout' | 'error' }>): Route {
  return { kind: 'deferred', reason: `${what}: ${reply.kind === 'timeout' ? 'DNS timeout' : reply.code}` };
}

function shuffleEqualPreferences<T extends { priority: number }>(records: T[]): T[] {
  const shuffled = records.map((record) => ({ record, key: Math.random() }));
  shuffled.sort((a, b) => a.record.priority - b.record.priority || a.key - b.key);
  return shuffled.map(({ record }) => record);
}

function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.$/, '');
}

/** The A and AAAA addresses of one host, or why there are none. */
async function resolveAddresses(
  dns: DnsClient,
  name: string,
): Promise<{ addresses: string[]; answers: Answer[] } | { failure: 'absent' } | { failure: 'deferred'; route: Route }> {
  const [v4, v6] = await Promise.all([dns.query(name, 'A'), dns.query(name, 'AAAA')]);
  const answers = [v4, v6].flatMap((reply) => (reply.kind === 'answer' ? reply.answers : []));
  const addresses = answers.map((answer) => recordData<string>(answer));
  if (addresses.length > 0) return { addresses, answers };
  // No address: permanent only when both questions were answered (NXDOMAIN or NODATA).
  for (const reply of [v4, v6])
    if (reply.kind === 'timeout' || reply.kind === 'error')
      return { failure: 'deferred', route: deferral(`address of ${name}`, reply) };
  return { failure: 'absent' };
}

export async function resolveRoute(dns: DnsClient, domain: string): Promise<Route> {
  const mx = await dns.query(domain, 'MX');
  switch (mx.kind) {
    case 'timeout':
    case 'error':
      return deferral(`MX of ${domain}`, mx);
    case 'nxdomain':
      return {
        kind: 'undeliverable',
        reason: `${domain} does not exist (NXDOMAIN)`,
        enhancedCode: '5.1.2',
        negative: true,
      };
    case 'nodata': {
      // RFC 5321 §5.1: no MX records, so the domain itself is the one host (the implicit MX).
      const resolved = await resolveAddresses(dns, domain);
      if ('failure' in resolved)
        return resolved.failure === 'deferred'
          ? resolved.route
          : {
              kind: 'undeliverable',
              reason: `${domain} has no MX and no address`,
              enhancedCode: '5.1.2',
              negative: true,
            };
      return {
        kind: 'hosts',
        implicit: true,
        // The implicit MX's security would be its address records'; DANE is only tried behind a signed MX.
        authentic: false,
        hosts: [{ name: normalizeName(domain), priority: 0, addresses: resolved.addresses }],
        ttlSeconds: minimumTtl(resolved.answers, MINIMUM_CACHE_SECONDS),
      };
    }
    case 'answer':
      break;
  }
  const records = mx.answers.map((answer) => {
    const data = recordData<{ exchange: string; preference: number }>(answer);
    return { name: normalizeName(data.exchange), priority: data.preference };
  });
  // RFC 7505: a single MX with the root as exchange says the domain accepts no mail.
  if (records.length === 1 && records[0].name === '')
    return {
      kind: 'undeliverable',
      reason: `${domain} publishes a null MX (RFC 7505)`,
      enhancedCode: '5.1.10',
      negative: false,
    };
  const usable = shuffleEqualPreferences(records.filter((record) => record.name !== ''));
  const resolved = await Promise.all(usable.map((record) => resolveAddresses(dns, record.name)));
  const hosts: MxHost[] = [];
  const answers: Answer[] = [...mx.answers];
  let firstDeferral: Route | null = null;
  usable.forEach((record, index) => {
    const result = resolved[index];
    if ('addresses' in result) {
      hosts.push({ ...record, addresses: result.addresses });
      answers.push(...result.answers);
    } else if (result.failure === 'deferred') firstDeferral ??= result.route;
  });
  if (hosts.length === 0)
    return (
      firstDeferral ?? {
        kind: 'undeliverable',
        reason: `no MX host of ${domain} has an address`,
        enhancedCode: '5.4.4',
        negative: true,
      }
    );
  return {
    kind: 'hosts',
    implicit: false,
    authentic: mx.authentic,
    hosts,
    ttlSeconds: minimumTtl(answers, MINIMUM_CACHE_SECONDS),
  };
}

/**
 * Routes kept by TTL, per MTA thread. Deferrals are not kept: the next message asks again. With a judge
 * of negative answers (the MTA loop's), a negative answer is a deferral until the judge believes it.
 */
export class RouteCache {
  private readonly routes = new TtlCache<Route>(MAXIMUM_CACHE_SECONDS * 1000, 10_000);

  constructor(
    private readonly dns: DnsClient,
    private readonly negatives?: NegativeAnswers,
  ) {}

  async route(domain: string): Promise<Route> {
    const key = normalizeName(domain);
    const hit = this.routes.get(key);
    if (hit) return hit;
    const route = await this.judged(key, await resolveRoute(this.dns, key));
    const ttlSeconds =
      route.kind === 'hosts'
        ? cacheSeconds(route.ttlSeconds)
        : route.kind === 'undeliverable'
          ? UNDELIVERABLE_TTL_SECONDS
          : 0;
    if (ttlSeconds > 0) this.routes.set(key, route, ttlSeconds * 1000);
    return route;
  }

  private async judged(domain: string, route: Route): Promise<Route> {
    const judge = this.negatives;
    if (!judge) return route;
    switch (route.kind) {
      case 'hosts':
        judge.sawHosts(domain);
        return route;
      case 'deferred':
        return { kind: 'deferred', reason: await judge.explainFailure(route.reason) };
      case 'undeliverable': {
        if (!route.negative) return route;
        const doubt = await judge.doubt(domain, route.reason);
        return doubt === null ? route : { kind: 'deferred', reason: doubt };
      }
    }
  }
}
