// Whether the resolver the MTA asks can be believed when it says a domain does not exist (issue 49 §3).
// A host whose resolver cannot reach the internet answers NXDOMAIN, NODATA or nothing at all for
// gmail.com as for a typo, and taking that answer at its word bounced and suppressed real addresses.
// So a negative answer is believed only when the resolver is healthy — the canary names
// (DNS_CANARY_NAMES, well-known domains with MX records) resolve — and a domain's non-existence only
// once it is confirmed over time: seen again after DNS_NXDOMAIN_CONFIRM_MS, on another look-up, and
// never for a domain this thread saw MX hosts for within the last hour. Anything else defers with a
// reason that names DNS. Per MTA thread, in memory: a restart only delays a bounce, it never causes one.
import { TtlCache } from '../ttl-cache.ts';
import type { DnsClient, DnsReply } from './dns-query.ts';

/** A healthy resolver is checked again after this long; an unhealthy one as often as a look-up needs it. */
export const RESOLVER_RECHECK_MS = 30_000;
/** A domain this thread routed to MX hosts this recently is not believed to have vanished. */
export const KNOWN_DOMAIN_MEMORY_MS = 60 * 60_000;
const MEMORY_ENTRIES = 50_000;

export interface ResolverState {
  healthy: boolean;
  /** When the resolver became healthy or unhealthy (this thread's first check, at the start). */
  since: Date;
  /** The canaries' failures at the latest check that failed (kept after recovery: what it was). */
  lastError: string | null;
  checkedAt: Date;
}

function replyText(reply: DnsReply): string | null {
  switch (reply.kind) {
    case 'answer':
      return null;
    case 'nodata':
      return 'no MX records (NODATA)';
    case 'nxdomain':
      return 'NXDOMAIN';
    case 'timeout':
      return 'DNS timeout';
    case 'error':
      return reply.code;
  }
}

/**
 * The resolver's health by its canaries: healthy when at least one canary's MX look-up answers with
 * records. Checks are shared (concurrent callers wait on one) and kept RESOLVER_RECHECK_MS.
 */
export class ResolverHealth {
  private current: ResolverState | null = null;
  private checking: Promise<ResolverState> | null = null;

  constructor(
    private readonly dns: DnsClient,
    private readonly options: {
      canaries: string[];
      /** Told of every check's result (the MTA loop publishes it: mta/sql/resolver-health.ts). */
      onCheck?: (state: ResolverState, changed: boolean) => void;
      now?: () => number;
    },
  ) {}

  get state(): ResolverState | null {
    return this.current;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The state, checked again when the last check is older than RESOLVER_RECHECK_MS (or `force`). */
  async check(force = false): Promise<ResolverState> {
    const state = this.current;
    if (!force && state && this.now() - state.checkedAt.getTime() < RESOLVER_RECHECK_MS) return state;
    this.checking ??= this.probe().finally(() => {
      this.checking = null;
    });
    return this.checking;
  }

  /** A look-up just answered with records: the resolver works, whatever the last check said. */
  sawAnswer(): void {
    if (this.current && !this.current.healthy) this.record(true, this.current.lastError);
  }

  private async probe(): Promise<ResolverState> {
    const replies = await Promise.all(this.options.canaries.map((name) => this.dns.query(name, 'MX')));
    const failures = replies.flatMap((reply, index) => {
      const text = replyText(reply);
      return text === null ? [] : [`MX of ${this.options.canaries[index]}: ${text}`];
    });
    const healthy = failures.length < replies.length;
    return this.record(healthy, healthy ? (this.current?.lastError ?? null) : failures.join('; '));
  }

  private record(healthy: boolean, lastError: string | null): ResolverState {
    const at = new Date(this.now());
    const changed = this.current?.healthy !== healthy;
    this.current = { healthy, since: changed ? at : this.current!.since, lastError, checkedAt: at };
    this.options.onCheck?.(this.current, changed);
    return this.current;
  }
}

/**
 * The judge of negative answers (mta/mx.ts: NXDOMAIN, no MX and no address, MX hosts without
 * addresses): believed, or turned into a deferral that says why not yet.
 */
export class NegativeAnswers {
  /** Domain → when this thread last routed it to MX hosts. */
  private readonly routed: TtlCache<number>;
  /** Domain → its first negative answer not yet believed, and the look-ups that gave it. */
  private readonly sightings: TtlCache<{ firstAt: number; lookups: number }>;

  constructor(
    readonly health: ResolverHealth,
    private readonly options: { confirmAfterMs: number; now?: () => number },
  ) {
    const now = options.now ?? Date.now;
    this.routed = new TtlCache(KNOWN_DOMAIN_MEMORY_MS, MEMORY_ENTRIES, now);
    // Long enough to see the confirming look-up after the backoff of a few retries.
    this.sightings = new TtlCache(Math.max(options.confirmAfterMs * 4, KNOWN_DOMAIN_MEMORY_MS), MEMORY_ENTRIES, now);
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** `domain` resolved to hosts: any sighting of its absence is forgotten. */
  sawHosts(domain: string): void {
    this.routed.set(domain, this.now());
    this.sightings.delete(domain);
    this.health.sawAnswer();
  }

  /** Null when the negative answer `reason` about `domain` is believed; else why the message waits. */
  async doubt(domain: string, reason: string): Promise<string | null> {
    const state = await this.health.check();
    if (!state.healthy)
      return `resolver unhealthy: ${state.lastError ?? 'canaries do not resolve'} (${reason}: not believed)`;
    const routedAt = this.routed.get(domain);
    if (routedAt !== undefined)
      return `DNS: ${reason}, but ${domain} had MX hosts at ${new Date(routedAt).toISOString()}: not believed`;
    const now = this.now();
    const seen = this.sightings.get(domain);
    // Believed on a second look-up at least confirmAfterMs after the first.
    if (seen && now - seen.firstAt >= this.options.confirmAfterMs) return null;
    const sighting = seen ? { ...seen, lookups: seen.lookups + 1 } : { firstAt: now, lookups: 1 };
    this.sightings.set(domain, sighting);
    const confirmAt = new Date(sighting.firstAt + this.options.confirmAfterMs).toISOString();
    return `DNS: ${reason}, first seen ${new Date(sighting.firstAt).toISOString()}; believed only if a look-up after ${confirmAt} says so again`;
  }

  /** A look-up that did not answer (timeout, SERVFAIL): its reason, naming the resolver when it is unhealthy. */
  async explainFailure(reason: string): Promise<string> {
    const state = await this.health.check();
    return state.healthy ? reason : `resolver unhealthy: ${state.lastError ?? 'canaries do not resolve'} (${reason})`;
  }
}

/** How often the MTA thread checks its resolver when no look-up asked: to notice a recovery, and to stay fresh. */
export const RESOLVER_WATCH_MS = 60_000;
const HEALTHY_REFRESH_MS = 5 * 60_000;

/**
 * The judge for one MTA thread: its resolver checked at once and every RESOLVER_WATCH_MS while unhealthy
 * (every five minutes while healthy), each check handed to `publish`. Answers the judge and a stop.
 */
export function watchResolver(
  dns: DnsClient,
  options: { canaries: string[]; confirmAfterMs: number; publish: (state: ResolverState, changed: boolean) => void },
): { negatives: NegativeAnswers; stop(): void } {
  const health = new ResolverHealth(dns, { canaries: options.canaries, onCheck: options.publish });
  const negatives = new NegativeAnswers(health, { confirmAfterMs: options.confirmAfterMs });
  const tick = () => {
    const state = health.state;
    if (!state || !state.healthy || Date.now() - state.checkedAt.getTime() >= HEALTHY_REFRESH_MS)
      void health.check(true);
  };
  tick();
  const timer = setInterval(tick, RESOLVER_WATCH_MS);
  timer.unref();
  return { negatives, stop: () => clearInterval(timer) };
}
