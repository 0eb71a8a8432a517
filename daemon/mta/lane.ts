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
 */
export class DestinationLane extends FixedLane<SpooledRow> {
  /** Its provider, once a row of it has been routed. */
  provider: string | null = null;

  constructor(
    key: string,
    private readonly shaper: Pick<Shaper, 'suspendedUntil'>,
  ) {
    super(key, DEFAULT_POOL_LIMITS.maxConnections, WAITING_PER_DESTINATION);
  }

  override paused(now = Date.now()): boolean {
    this.pausedUntil = this.shaper.suspendedUntil(this.provider, this.key, now);
    return this.pausedUntil > now;
  }

  override freeSlots(): number {
    return this.paused() ? 0 : super.freeSlots();
  }

  override room(): number {
    return this.paused() ? 0 : super.room();
  }
}
