// Shaping of the outbound MTA (issue 28's loop, issue 29; docs/mta.md "Shaping and reactions"): what
// may be attempted now, and over which connections. Per provider (told by the MX host names,
// mta/providers.ts, with the platform admins' rules from mta_providers): one connection pool shared by
// every destination domain of that provider in this process (its connection and messages-per-connection
// limits), and a pacer for its messages per minute. Per tenant: a pacer for its messages per second and
// an hourly count shared by all nodes in the database. Reactions (reactions.ts) suspend a provider or a
// destination, slow it, or pause a tenant. A row that may not go now is given back with a `run_at`
// (never an attempt); one that may go within MAX_PACE_WAIT_MS waits in its lane.
//
// Per node: connections and rates are this node's share: the provider's and tenant's figures divided by
// the worker nodes seen in daemon_nodes (at least 1). The hourly count is exact across nodes.
// `default` is not one provider: its shape applies to each destination domain on its own.
import { errorText } from '../errors.ts';
import type { Logger } from 'pino';
import type { Sql } from '../db/sql.ts';
import { NODE_SEEN_WITHIN_MS } from '../db/nodes.ts';
import type { RecipientResult, SessionOptions } from './connection.ts';
import type { MxHost } from './mx.ts';
import { DEFAULT_POOL_LIMITS, DestinationPool, type PoolLimits } from './pool.ts';
import { DEFAULT_PROVIDER_KEY, DEFAULT_PROVIDERS, providerOf } from './providers.ts';
import { reactionTo } from './reactions.ts';
import { loadProviderRules, type ProviderRule } from './sql/providers.ts';
import {
  loadActiveSuspensions,
  loadReactionRules,
  type ActiveSuspension,
  type ReactionRecord,
  type ReactionRule,
} from './sql/reactions.ts';
import {
  liveWorkerNodes,
  loadPausedTenants,
  loadTenantThrottles,
  pruneHourlyCounts,
  takeHourlySlot,
  type TenantThrottle,
} from './sql/throttles.ts';

/**
 * Rules, suspensions, throttles and the live nodes are read again this often, and at once on a NOTIFY
 * (a change, a node joining or leaving cleanly): a killed node, which says nothing, is seen gone at the
 * first reload 30 s after its last heartbeat (db/nodes.ts).
 */
export const SHAPING_REFRESH_MS = 10_000;
/** A row due within this long waits in its lane; a later one is given back until its time. */
const MAX_PACE_WAIT_MS = 2_000;
/**
 * A paced row is given back this much before its slot, so that the claim's latency is spent waiting in
 * its lane (< MAX_PACE_WAIT_MS) and not late, bunched with the next slot.
 */
const PACED_RETURN_EARLY_MS = 1_000;
/** A paused tenant's rows are looked at again after this long (an owner may resume sending). */
const PAUSED_TENANT_RECHECK_MS = 2 * 60_000;
/** A reaction applied here before its batch commits is kept this long beside what the database says. */
const LOCAL_REACTION_KEEP_MS = 30_000;
/** By then the batch that drew a local reaction has recorded it (commit linger and statement, with room). */
const LOCAL_REACTION_RECORDED_MS = 5_000;
/** A pacer reservation for a row that went to another node is forgotten after this long. */
const RESERVATION_KEEP_MS = 5 * 60_000;

/** Spaces events `intervalMs` apart, no burst (GCRA): each reservation answers when its event may go. */
export class Pacer {
  private next = 0;
  constructor(public intervalMs: number) {}

  reserve(now = Date.now()): number {
    const at = Math.max(now, this.next);
    this.next = at + this.intervalMs;
    return at;
  }
}

export type Admission =
  { kind: 'go'; pool: DestinationPool; provider: ProviderRule } | { kind: 'later'; until: Date; reason: string };

export interface ShapedRow {
  id: string;
  tenantId: string | null;
  emailId: string | null;
  domain: string;
}

export interface ShaperOptions {
  sql: Sql;
  log: Logger;
  session: SessionOptions;
  /** Asks the loop for a claim at `at` (ms), when a given-back row falls due (queue/wake.ts WakeTimer). */
  wakeAt: (at: number) => void;
  /** The clock (ms since the epoch) the pacing and reactions read: the real one unless a test advances its own. */
  now?: () => number;
}

const shipped = (): ProviderRule[] =>
  DEFAULT_PROVIDERS.map((provider) => ({ ...provider, origin: 'shipped', updatedAt: null }));

/** Keys of the providers whose rule differs between two reads (added, edited or removed). */
function changedProviders(before: readonly ProviderRule[], after: readonly ProviderRule[]): string[] {
  const shape = (rule: ProviderRule) =>
    JSON.stringify([
      rule.label,
      rule.mxPatterns,
      rule.maxConnections,
      rule.maxMessagesPerConnection,
      rule.messagesPerMinute,
    ]);
  const old = new Map(before.map((rule) => [rule.key, shape(rule)]));
  const changed = after.filter((rule) => old.get(rule.key) !== shape(rule)).map((rule) => rule.key);
  const kept = new Set(after.map((rule) => rule.key));
  return [...changed, ...before.filter((rule) => !kept.has(rule.key)).map((rule) => rule.key)];
}

export class Shaper {
  private providers: ProviderRule[] = shipped();
  private rules: ReactionRule[] = [];
  private suspensions: ActiveSuspension[] = [];
  private local: Array<{ suspension: ActiveSuspension; at: number }> = [];
  private throttles = new Map<string, TenantThrottle>();
  private paused = new Set<string>();
  private nodes = 1;
  private readonly pools = new Map<string, DestinationPool>();
  /** What each pool's limits were last computed from: a reload (another node, an edit) applies them again at once. */
  private readonly poolShapes = new Map<string, { providerKey: string; factor: number }>();
  private readonly providerPacers = new Map<string, Pacer>();
  private readonly tenantPacers = new Map<string, Pacer>();
  /** Rows given back with a pacer slot: they go at once when they come back. */
  private readonly reservations = new Map<string, number>();

  private readonly now: () => number;

  constructor(private readonly options: ShaperOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Reads rules, reactions in force, throttles, paused tenants and live nodes. Keeps the last on failure. */
  async refresh(): Promise<void> {
    const { sql, log } = this.options;
    try {
      const [providers, rules, suspensions, throttles, paused, nodes] = await Promise.all([
        loadProviderRules(sql),
        loadReactionRules(sql),
        loadActiveSuspensions(sql),
        loadTenantThrottles(sql),
        loadPausedTenants(sql),
        liveWorkerNodes(sql, NODE_SEEN_WITHIN_MS),
      ]);
      const changed = changedProviders(this.providers, providers);
      this.providers = providers;
      // Says on which node an admin's edit took effect, and when (the loop reads it at its next claim).
      if (changed.length > 0)
        log.info({ providers: changed }, 'provider shaping rules changed; the loop uses them now');
      this.rules = rules;
      this.suspensions = suspensions;
      this.throttles = new Map(throttles.map((throttle) => [throttle.tenantId, throttle]));
      this.paused = new Set(paused);
      const nodesChanged = nodes !== this.nodes;
      this.nodes = nodes;
      // A node joined or left (it NOTIFYs at either, db/nodes.ts), or a rule changed: every open pool takes
      // its new share now, not at its next message, so two nodes' sessions never add up past the figure.
      if (nodesChanged)
        log.info({ workerNodes: nodes }, 'worker nodes changed; this node uses its share of every shaping figure');
      if (nodesChanged || changed.length > 0) this.reshapePools();
      await pruneHourlyCounts(sql);
    } catch (error) {
      log.warn({ err: errorText(error) }, 'could not reload the shaping rules; keeping the last ones');
    }
    const now = this.now();
    // A local copy stands in for its row until the batch records it; once the database had time to, a copy
    // the database no longer has in force was lifted by an admin (DELETE /platform/reactions/{id}).
    const inForce = (copy: ActiveSuspension) =>
      this.suspensions.some(
        (s) => s.providerKey === copy.providerKey && s.domain === copy.domain && s.kind === copy.kind,
      );
    this.local = this.local.filter(
      (entry) =>
        now - entry.at < LOCAL_REACTION_KEEP_MS &&
        (now - entry.at < LOCAL_REACTION_RECORDED_MS || inForce(entry.suspension)),
    );
    for (const [id, at] of this.reservations) if (at < now - RESERVATION_KEEP_MS) this.reservations.delete(id);
  }

  providerOf(hosts: readonly MxHost[]): ProviderRule {
    return providerOf(
      hosts.map((host) => host.name),
      this.providers,
    ) as ProviderRule;
  }

  private active(now: number): ActiveSuspension[] {
    return [...this.suspensions, ...this.local.map((entry) => entry.suspension)].filter((s) => s.until.getTime() > now);
  }

  private concerns(suspension: ActiveSuspension, providerKey: string | null, domain: string): boolean {
    return suspension.domain === null ? suspension.providerKey === providerKey : suspension.domain === domain;
  }

  /** When a suspension of this destination (or its whole provider) ends; 0 when there is none. */
  suspendedUntil(providerKey: string | null, domain: string, now = this.now()): number {
    let until = 0;
    for (const s of this.active(now))
      if (s.kind === 'suspend' && this.concerns(s, providerKey, domain)) until = Math.max(until, s.until.getTime());
    return until;
  }

  /** The strongest slow-down in force for this destination: 1 when there is none. */
  private slowFactor(providerKey: string, domain: string, now: number): number {
    let factor = 1;
    for (const s of this.active(now))
      if (s.kind === 'slow' && s.factor !== null && this.concerns(s, providerKey, domain))
        factor = Math.min(factor, s.factor);
    return factor;
  }

  /** The pool (and pacer) a destination shares: its provider's, or its own under `default`. */
  private keyOf(provider: ProviderRule, domain: string): string {
    return provider.key === DEFAULT_PROVIDER_KEY ? `${DEFAULT_PROVIDER_KEY}/${domain}` : provider.key;
  }

  /**
   * A provider's connections are kept per source address (IP pools, source-address.ts): each address
   * has its own sessions and EHLO name, and the provider's limits hold per address, as KumoMTA shapes
   * per source and site.
   */
  private poolFor(key: string, provider: ProviderRule, factor: number, session: SessionOptions): DestinationPool {
    const sourceKey = `${key}|${session.localAddress ?? ''}|${session.ehloName}`;
    let pool = this.pools.get(sourceKey);
    if (!pool) this.pools.set(sourceKey, (pool = new DestinationPool(DEFAULT_POOL_LIMITS, session)));
    this.poolShapes.set(sourceKey, { providerKey: provider.key, factor });
    pool.setLimits(this.limitsOf(provider, factor));
    return pool;
  }

  /**
   * This node's connections to a destination of a provider (its lane runs no more rows at once), with a
   * slow-down in force; the shipped figure of DEFAULT_POOL_LIMITS when the provider is not known.
   */
  connectionShare(providerKey: string, domain: string): number {
    const provider = this.providers.find((rule) => rule.key === providerKey);
    if (!provider) return DEFAULT_POOL_LIMITS.maxConnections;
    return this.limitsOf(provider, this.slowFactor(providerKey, domain, this.now())).maxConnections;
  }

  /** This node's share of a provider's connections (rounded down: the nodes' sum never passes the figure). */
  private limitsOf(provider: ProviderRule, factor: number): PoolLimits {
    return {
      ...DEFAULT_POOL_LIMITS,
      maxConnections: Math.max(1, Math.floor((provider.maxConnections * factor) / this.nodes)),
      maxMessagesPerConnection: provider.maxMessagesPerConnection,
    };
  }

  private reshapePools(): void {
    for (const [sourceKey, pool] of this.pools) {
      const shape = this.poolShapes.get(sourceKey);
      const provider = shape && this.providers.find((rule) => rule.key === shape.providerKey);
      if (shape && provider) pool.setLimits(this.limitsOf(provider, shape.factor));
    }
  }

  private pacer(pacers: Map<string, Pacer>, key: string, perMs: number | null): Pacer | null {
    if (perMs === null || perMs <= 0) {
      pacers.delete(key);
      return null;
    }
    const intervalMs = this.nodes / perMs;
    let pacer = pacers.get(key);
    if (!pacer) pacers.set(key, (pacer = new Pacer(intervalMs)));
    pacer.intervalMs = intervalMs;
    return pacer;
  }

  /** Asks the loop for a claim when a given-back row falls due (one timer per 50 ms). */
  private later(until: number, reason: string): Admission {
    this.options.wakeAt(until);
    return { kind: 'later', until: new Date(until), reason };
  }

  /**
   * Whether a routed row may be attempted now, and over which pool. Waits (up to MAX_PACE_WAIT_MS)
   * for its pacers; answers `later` when the tenant is paused, the destination suspended, the pacers
   * further out, or the tenant's hour full.
   */
  async admit(
    row: ShapedRow,
    hosts: readonly MxHost[],
    session: SessionOptions = this.options.session,
  ): Promise<Admission> {
    const now = this.now();
    if (row.tenantId && this.paused.has(row.tenantId))
      return this.later(now + PAUSED_TENANT_RECHECK_MS, "the tenant's sending is paused");
    const provider = this.providerOf(hosts);
    const suspended = this.suspendedUntil(provider.key, row.domain, now);
    if (suspended > now) return this.later(suspended, `${provider.key} is suspended by a reaction`);
    const factor = this.slowFactor(provider.key, row.domain, now);
    const key = this.keyOf(provider, row.domain);
    const throttle = row.tenantId ? this.throttles.get(row.tenantId) : undefined;

    let at = this.reservations.get(row.id);
    this.reservations.delete(row.id);
    if (at === undefined) {
      at = now;
      const perMinute = provider.messagesPerMinute === null ? null : provider.messagesPerMinute * factor;
      const providerPacer = this.pacer(this.providerPacers, key, perMinute === null ? null : perMinute / 60_000);
      if (providerPacer) at = Math.max(at, providerPacer.reserve(now));
      const perSecond = throttle?.messagesPerSecond ?? null;
      const tenantPacer = row.tenantId
        ? this.pacer(this.tenantPacers, row.tenantId, perSecond === null ? null : perSecond / 1_000)
        : null;
      if (tenantPacer) at = Math.max(at, tenantPacer.reserve(now));
    }
    if (at - now > MAX_PACE_WAIT_MS) {
      this.reservations.set(row.id, at);
      return this.later(at - PACED_RETURN_EARLY_MS, 'paced by its provider or tenant rate');
    }
    if (at > now) await new Promise((resolve) => setTimeout(resolve, at - now));

    if (row.tenantId && throttle?.messagesPerHour) {
      const nextHour = await takeHourlySlot(this.options.sql, row.tenantId, throttle.messagesPerHour);
      // Spread over the first minute of the next hour rather than all at its first second.
      if (nextHour !== null)
        return this.later(nextHour + Math.random() * 60_000, "the tenant's hourly throttle is reached");
    }
    return { kind: 'go', pool: this.poolFor(key, provider, factor, session), provider };
  }

  /**
   * The reaction an attempt's replies call for, applied in this process at once (so the rows still in
   * flight here stop); the loop records it with the attempt's batch.
   */
  react(row: ShapedRow, providerKey: string, results: readonly RecipientResult[]): ReactionRecord | null {
    const reaction = reactionTo(this.rules, { ...row, providerKey }, results);
    if (!reaction) return null;
    const { rule } = reaction;
    if (rule.action === 'pause_tenant') {
      if (reaction.tenantId) this.paused.add(reaction.tenantId);
    } else {
      const now = this.now();
      this.local.push({
        at: now,
        suspension: {
          providerKey,
          domain: reaction.domain,
          kind: rule.action,
          factor: rule.factor,
          until: new Date(now + (rule.minutes ?? 0) * 60_000),
        },
      });
    }
    this.options.log.info(
      { provider: providerKey, domain: reaction.domain, action: rule.action, reply: reaction.reply },
      'a provider reply drew a reaction',
    );
    return reaction;
  }

  /** A destination's lane closed: its own pool (under `default`) goes with it. */
  closeDestination(domain: string): void {
    const key = `${DEFAULT_PROVIDER_KEY}/${domain}`;
    for (const [poolKey, pool] of this.pools)
      if (poolKey.startsWith(`${key}|`)) {
        pool.close();
        this.pools.delete(poolKey);
        this.poolShapes.delete(poolKey);
      }
    this.providerPacers.delete(key);
  }

  /** Connections open now per provider (a destination's own pool counts under `default`): /metrics. */
  connectionsByProvider(): Map<string, number> {
    const sums = new Map<string, number>();
    for (const [poolKey, pool] of this.pools) {
      const key = poolKey.slice(0, poolKey.indexOf('|'));
      const provider = key.startsWith(`${DEFAULT_PROVIDER_KEY}/`) ? DEFAULT_PROVIDER_KEY : key;
      sums.set(provider, (sums.get(provider) ?? 0) + pool.connections);
    }
    return sums;
  }

  close(): void {
    for (const pool of this.pools.values()) pool.close();
    this.pools.clear();
    this.poolShapes.clear();
  }
}
