// Which source address a spool row leaves from (issue 29, docs/mta.md "IP pools and warm-up"). The
// MTA loop asks once per row, after routing: the row's pool is the most specific assignment of its
// tenant (project and stream, project, stream, tenant default); within the pool an address is picked
// by weight (smooth weighted round robin, so two addresses of weight 1 alternate) among those under
// today's ceiling for the destination's provider (held back where the provider deferred or bounced too
// much: mta/warmup.ts), warm addresses (no warm-up, or past its last step) always being under. None
// left: the row waits until the next UTC day (or until an admin changes the pool). No pool: the node's
// OUTBOUND_ADDRESS and EHLO_NAME, as before pools existed.
//
// Counting: what this node sent today is read from ip_warmup_counts (refreshed every few seconds)
// plus what it committed since that read plus what it has in flight (chosen, not yet committed). The
// loop adds the counts in its batch commit (one statement). Other nodes' sends are seen at the next
// refresh, their in-flight ones not at all: with N nodes an address can pass its ceiling by at most
// what the other nodes send in one refresh interval plus what they hold in flight.
import type { Sql } from '../db/sql.ts';
import { cachedLoad, TtlCache } from '../ttl-cache.ts';
import type { SessionOptions } from './connection.ts';
import { DEFAULT_PROVIDERS, providerOf, type ProviderShape } from './providers.ts';
import { poolOfRow, readPoolRows, readWarmupStandings, type CountIncrement, type PoolAddressRow } from './sql/pools.ts';
import type { SpooledRow } from './sql/spool.ts';
import {
  ceilingFor,
  defaultWarmupSchedule,
  holdsRamp,
  nextUtcDay,
  NO_STANDING,
  utcDay,
  type WarmupStanding,
} from './warmup.ts';
import type { WarmupSchedule } from '../../shared/schemas/ip-pools.ts';

/** How long an assignment or a pool's addresses and counts are kept before they are read again. */
export const POOL_REFRESH_MS = 5_000;
/**
 * Before a row is made to wait, a pool read longer ago than this is read again: an admin's change
 * (an address added, a warm-up start moved) wakes the rows waiting on the pool, and they must see it.
 */
const RECHECK_BEFORE_WAIT_MS = 1_000;

/**
 * How long an address this node could not bind (EADDRNOTAVAIL) is left out of its pool before it is
 * tried again: an operator who adds it to the interface sees it used within this time.
 */
export const UNBINDABLE_RECHECK_MS = 5 * 60_000;

/** One row's use of an address: what the batch commit adds to the day's counts. */
export interface SourceUse extends CountIncrement {
  poolId: string;
}

export type SourceChoice =
  /** No pool assigned (or system mail): the node's own source address and EHLO name. */
  | { kind: 'default'; session: SessionOptions }
  | { kind: 'address'; session: SessionOptions; use: SourceUse }
  /** Every address of the pool is at today's ceiling for this provider. */
  | { kind: 'wait'; poolId: string; until: Date; reason: string }
  /** No address of the pool can be bound on this node (each failed with EADDRNOTAVAIL lately). */
  | { kind: 'unbindable'; poolId: string; reason: string };

interface PoolSnapshot {
  day: string;
  /** Epoch ms of the read (the cache's clock, not the warm-up clock). */
  loadedAt: number;
  schedule: WarmupSchedule;
  addresses: PoolAddressRow[];
  /**
   * By `${addressId}|${provider}`: today's recipients and refusals, read from the table plus this node's
   * commits since, and the days that held the ramp.
   */
  standings: Map<string, WarmupStanding>;
}

export interface SourceChooserOptions {
  sql: Sql;
  /** The node's source when no pool applies (OUTBOUND_ADDRESS, EHLO_NAME). */
  fallback: SessionOptions;
  providers?: readonly ProviderShape[];
  /** The clock (a test clock drives day 1, 10, 30). */
  now?: () => Date;
  refreshMs?: number;
}

export class SourceAddressChooser {
  private readonly assignments: TtlCache<Promise<string | null>>;
  private readonly snapshots: TtlCache<Promise<PoolSnapshot | null>>;
  /** Chosen and not committed yet, by `${addressId}|${provider}|${day}`. */
  private readonly inFlight = new Map<string, number>();
  /** Smooth weighted round robin state by `${poolId}|${provider}`: each address's current weight. */
  private readonly rotation = new Map<string, Map<string, number>>();
  /** Addresses this node could not bind, by id: left out of their pool until `until` (epoch ms). */
  private readonly unbindable = new Map<string, { until: number; reason: string }>();
  private readonly now: () => Date;
  private readonly providers: readonly ProviderShape[];

  constructor(private readonly options: SourceChooserOptions) {
    const refreshMs = options.refreshMs ?? POOL_REFRESH_MS;
    this.assignments = new TtlCache(refreshMs, 10_000);
    this.snapshots = new TtlCache(refreshMs, 1_000);
    this.now = options.now ?? (() => new Date());
    this.providers = options.providers ?? DEFAULT_PROVIDERS;
  }

  /** Picks the source of one attempt of `row` to the destination served by `mxHostnames`, and reserves it. */
  async choose(
    row: Pick<SpooledRow, 'tenantId' | 'projectId' | 'stream'>,
    mxHostnames: readonly string[],
    recipients: number,
    rechecked = false,
  ): Promise<SourceChoice> {
    const fallback: SourceChoice = { kind: 'default', session: this.options.fallback };
    if (!row.tenantId) return fallback;
    const { tenantId, projectId, stream } = row;
    const assignmentKey = `${tenantId}|${projectId ?? ''}|${stream}`;
    const poolId = await cachedLoad(this.assignments, assignmentKey, () =>
      poolOfRow(this.options.sql, tenantId, projectId, stream),
    );
    if (!poolId) return fallback;
    const now = this.now();
    const day = utcDay(now);
    const snapshot = await this.snapshotOf(poolId, day);
    if (!snapshot || snapshot.addresses.length === 0) return fallback;
    const provider = providerOf(mxHostnames, this.providers).key;
    const bindable = snapshot.addresses.filter((address) => !this.isUnbindable(address.id));
    if (bindable.length === 0)
      return {
        kind: 'unbindable',
        poolId,
        // Each mark's reason names its address and this node (mta/source-faults.ts).
        reason: snapshot.addresses.map((address) => this.unbindable.get(address.id)?.reason ?? address.ip).join('; '),
      };

    let held = false;
    const eligible = bindable.filter((address) => {
      const standing = snapshot.standings.get(`${address.id}|${provider}`) ?? NO_STANDING;
      const ceiling = ceilingFor(snapshot.schedule, provider, address.warmupStartedAt, now, standing);
      if (ceiling === null) return true;
      const used = standing.sent + this.inFlightOf(address.id, provider, day);
      if (used + recipients <= ceiling) return true;
      held ||= holdsRamp(standing);
      return false;
    });
    if (eligible.length === 0) {
      if (!rechecked && Date.now() - snapshot.loadedAt > RECHECK_BEFORE_WAIT_MS) {
        this.assignments.delete(assignmentKey);
        this.snapshots.delete(poolId);
        return this.choose(row, mxHostnames, recipients, true);
      }
      const until = nextUtcDay(now);
      return {
        kind: 'wait',
        poolId,
        until,
        reason: `451 4.7.0 warm-up: every address of the pool is at today's ceiling for ${provider}${held ? ` (held back a step: ${provider} deferred or bounced too many of today's recipients)` : ''}; waiting until ${until.toISOString()}`,
      };
    }
    const address = this.pickByWeight(`${poolId}|${provider}`, eligible);
    const use: SourceUse = { poolId, addressId: address.id, provider, day, sent: recipients, refused: 0 };
    this.adjustInFlight(use, recipients);
    return { kind: 'address', session: { ehloName: address.ehloName, localAddress: address.ip }, use };
  }

  /** Pools changed (an admin's NOTIFY): assignments, addresses and schedules are read again. Counts in flight stay. */
  forget(): void {
    this.assignments.clear();
    this.snapshots.clear();
  }

  /** The address could not be bound on this node: its pool's other addresses are used for a while. */
  markUnbindable(addressId: string, reason: string, forMs = UNBINDABLE_RECHECK_MS): void {
    this.unbindable.set(addressId, { until: Date.now() + forMs, reason });
  }

  /** A session was opened from the address: it is bound again (answers whether it had been marked). */
  markBound(addressId: string): boolean {
    return this.unbindable.delete(addressId);
  }

  private isUnbindable(addressId: string): boolean {
    const mark = this.unbindable.get(addressId);
    if (!mark) return false;
    if (mark.until > Date.now()) return true;
    this.unbindable.delete(addressId);
    return false;
  }

  /** The attempt reached no MX host: its reservation is given back, nothing is counted. */
  unused(use: SourceUse): void {
    this.adjustInFlight(use, -use.sent);
  }

  /** The batch carrying these uses committed their counts: they move from in flight to sent (and refused). */
  committed(uses: SourceUse[]): void {
    for (const use of uses) {
      this.adjustInFlight(use, -use.sent);
      void this.snapshots.get(use.poolId)?.then((snapshot) => {
        if (snapshot?.day !== use.day) return;
        const key = `${use.addressId}|${use.provider}`;
        const kept = snapshot.standings.get(key) ?? NO_STANDING;
        snapshot.standings.set(key, { ...kept, sent: kept.sent + use.sent, refused: kept.refused + use.refused });
      });
    }
  }

  private snapshotOf(poolId: string, day: string): Promise<PoolSnapshot | null> {
    const load = async (): Promise<PoolSnapshot | null> => {
      const rows = await readPoolRows(this.options.sql, poolId);
      if (!rows) return null;
      const standings = await readWarmupStandings(
        this.options.sql,
        rows.addresses.map((address) => address.id),
        day,
      );
      return {
        day,
        loadedAt: Date.now(),
        schedule: rows.schedule ?? defaultWarmupSchedule(),
        addresses: rows.addresses,
        standings,
      };
    };
    const kept = this.snapshots.get(poolId);
    // A new UTC day starts from fresh counts.
    if (kept)
      return kept.then((snapshot) => {
        if (!snapshot || snapshot.day === day) return snapshot;
        this.snapshots.delete(poolId);
        return cachedLoad(this.snapshots, poolId, load);
      });
    return cachedLoad(this.snapshots, poolId, load);
  }

  private inFlightOf(addressId: string, provider: string, day: string): number {
    return this.inFlight.get(`${addressId}|${provider}|${day}`) ?? 0;
  }

  private adjustInFlight(use: SourceUse, by: number): void {
    const key = `${use.addressId}|${use.provider}|${use.day}`;
    const next = (this.inFlight.get(key) ?? 0) + by;
    if (next > 0) this.inFlight.set(key, next);
    else this.inFlight.delete(key);
  }

  /** nginx's smooth weighted round robin: even spread by weight, deterministic. */
  private pickByWeight(key: string, eligible: PoolAddressRow[]): PoolAddressRow {
    let current = this.rotation.get(key);
    if (!current) this.rotation.set(key, (current = new Map()));
    let total = 0;
    let best: PoolAddressRow | null = null;
    for (const address of eligible) {
      const value = (current.get(address.id) ?? 0) + address.weight;
      current.set(address.id, value);
      total += address.weight;
      if (!best || value > current.get(best.id)!) best = address;
    }
    current.set(best!.id, current.get(best!.id)! - total);
    return best!;
  }
}
