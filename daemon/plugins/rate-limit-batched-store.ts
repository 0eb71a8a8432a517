// A @fastify/rate-limit store whose counts are exact across nodes and cost about one Redis command per
// event-loop turn and key, not one per request (issue 51 §3).
//
// Every hit is counted by Redis before it is answered, so Redis's single counter decides each one and
// N nodes together admit exactly the limit: a burst of limit + k requests over any nodes gets exactly k
// 429s. The hits one key receives during one turn of the event loop go to Redis together, as one
// EVALSHA that adds them all and answers the count; Redis's INCRBY numbers them current − n + 1 …
// current, in arrival order, and each is admitted or refused by its own number. Same key, same fixed
// window and same count of every request (admitted or not) as the package's RedisStore, so nodes of
// both kinds share counts.
//
// Before, each node counted in its own process and sent its hits in batches (issue 27), answering from
// its view while far from the limit: up to (N − 1) × 50 requests beyond the limit per window with N
// nodes, and a request that found 50 hits unsent waited for their round trip; at the accept bench's
// rate that was every ~10 ms, for every request arriving meanwhile (the p99 of issue 51 §3).
import type { Redis } from 'ioredis';

const ADD_HITS = `
  local current = redis.call('INCRBY', KEYS[1], ARGV[2])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
    ttl = tonumber(ARGV[1])
  end
  return {current, ttl}`;

type Callback = (error: Error | null, state?: { current: number; ttl: number }) => void;
type AddHits = (key: string, windowMs: number, hits: number) => Promise<[number, number]>;

class CoalescingRedisStore {
  /** Hits waiting for this turn's send, by key. */
  private readonly waiting = new Map<string, { callbacks: Callback[]; windowMs: number }>();
  private scheduled = false;

  constructor(
    private readonly addHits: AddHits,
    private readonly prefix: string,
  ) {}

  incr(key: string, callback: Callback, windowMs: number): void {
    const entry = this.waiting.get(key);
    if (entry) entry.callbacks.push(callback);
    else this.waiting.set(key, { callbacks: [callback], windowMs });
    if (!this.scheduled) {
      this.scheduled = true;
      // After this turn's I/O callbacks: the hits of every request read in this turn go together.
      setImmediate(() => this.send());
    }
  }

  /** A route with limits of its own (sign-in) counts under keys of its own, as RedisStore's child does. */
  child(routeOptions: object): CoalescingRedisStore {
    // At run time the package passes the route's merged limit options, routeInfo among them (its
    // types say RouteOptions).
    const { routeInfo } = routeOptions as { routeInfo: { method: string; url: string } };
    return new CoalescingRedisStore(this.addHits, `${this.prefix}${routeInfo.method}${routeInfo.url}-`);
  }

  /** One EVALSHA per key for the hits of this turn (ioredis writes them in one socket write). */
  private send(): void {
    this.scheduled = false;
    const batches = [...this.waiting];
    this.waiting.clear();
    for (const [key, { callbacks, windowMs }] of batches) {
      this.addHits(this.prefix + key, windowMs, callbacks.length).then(
        ([current, ttl]) => {
          const first = current - callbacks.length + 1;
          callbacks.forEach((callback, i) => callback(null, { current: first + i, ttl }));
        },
        (error: Error) => {
          for (const callback of callbacks) callback(error);
        },
      );
    }
  }
}

/**
 * The store class @fastify/rate-limit instantiates (`store` option), bound to one Redis connection
 * and key prefix (the same keys as its RedisStore, so nodes of both kinds share counts).
 */
export function batchedRedisStore(redis: Redis, prefix: string) {
  // A defined command runs by its SHA (EVALSHA), not by sending the script each time.
  const commands = redis as Redis & {
    rateLimitAddHits?: (key: string, windowMs: number, hits: number) => Promise<[number, number]>;
  };
  if (!commands.rateLimitAddHits) redis.defineCommand('rateLimitAddHits', { numberOfKeys: 1, lua: ADD_HITS });
  const addHits: AddHits = (key, windowMs, hits) => commands.rateLimitAddHits!(key, windowMs, hits);
  return class extends CoalescingRedisStore {
    constructor() {
      super(addHits, prefix);
    }
  };
}
