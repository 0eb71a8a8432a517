// One destination domain's lane of the outbound MTA on the leased-batch engine (queue/leased-batch.ts,
// wired by jobs/mta-loop.ts): how many of its spool rows may be on the wire at once, how many more may
// wait, and whether a reaction suspends it now.
import { FixedLane } from '../queue/leased-batch.ts';
import { DEFAULT_POOL_LIMITS } from './pool.ts';
import type { Shaper } from './shaping.ts';
import type { SpooledRow } from './sql/spool.ts';

/** Rows a destination may keep waiting beyond its connections. */
export const WAITING_PER_DESTINATION = DEFAULT_POOL_LIMITS.maxConnections * 2;
/** What a claim may take for a destination that has no lane yet. */
export const NEW_DESTINATION_ROOM = DEFAULT_POOL_LIMITS.maxConnections + WAITING_PER_DESTINATION;

/**
 * One destination domain: its rows run up to DEFAULT_POOL_LIMITS.maxConnections at once, one transaction
 * each (its provider's pool, shaping.ts, may hold them to fewer connections); none while a reaction
 * suspends it (the engine gives its waiting rows back until then, and the claim skips it). Its
 * connections are shaping's, kept per provider and source address (IP pools, source-address.ts).
 *
 * Once its provider is known, it runs and keeps waiting no more than this node's share of the provider's
 * connections allows (and twice that waiting): rows beyond it would only wait here while another worker
 * node, idle, could send them (issue 51 §4: a node that joined took nothing of a 300-row backlog).
 */
export class DestinationLane extends FixedLane<SpooledRow> {
  /** Its provider, once a row of it has been routed. */
  provider: string | null = null;

  constructor(
    key: string,
    private readonly shaper: Pick<Shaper, 'suspendedUntil' | 'connectionShare'>,
  ) {
    super(key, DEFAULT_POOL_LIMITS.maxConnections, WAITING_PER_DESTINATION);
  }

  /** Rows on the wire at once: this node's connections to the destination, once its provider is known. */
  private slots(): number {
    if (this.provider === null) return this.limit;
    return Math.min(this.limit, this.shaper.connectionShare(this.provider, this.key));
  }

  override paused(now = Date.now()): boolean {
    this.pausedUntil = this.shaper.suspendedUntil(this.provider, this.key, now);
    return this.pausedUntil > now;
  }

  override freeSlots(): number {
    return this.paused() ? 0 : Math.max(0, this.slots() - this.inFlight);
  }

  override room(): number {
    if (this.paused()) return 0;
    const slots = this.slots();
    const waitingCap = Math.min(this.waitingCap, 2 * slots);
    return Math.max(0, slots - this.inFlight + waitingCap - this.waiting.length);
  }

  override runningLow(): boolean {
    return this.waiting.length < this.slots();
  }
}
