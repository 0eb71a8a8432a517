// A @fastify/rate-limit store that counts in this process and reconciles with Redis in batches
// (issue 27): the Redis round trip of every request cost ~15 % of the accept rate. The counter in
// Redis stays the one every node shares (same key, same fixed window as the package's RedisStore);
// a node adds its hits to it at most FLUSH_MS later or every `batch` hits, and learns the others'
// total from each reply.
//
// Tolerance: a node answers from its own view only while that view is fresh (synced within
// FRESH_MS), holds at most `batch` unsent hits per key (batch is 5 % of the limit, at most
// MAX_BATCH, 0 below 20: small limits such as sign-in's stay exact, one round trip per request),
// and its view (the shared count, its own hits on the way to Redis, its unsent hits) leaves more
// than two batches below the limit. In the last two batches every hit is counted by Redis first and
// admitted by Redis's answer, so what another node has not sent yet is the only error: N nodes
// admit at most (N − 1) × batch requests beyond the limit per window, and one node alone never
// exceeds it. (A node's own hits on the way to Redis are part of its view: a CI run under load,
// where a round trip took long, admitted 22 beyond a limit of 400 with a tolerance of 20 before.)
import type { Redis } from 'ioredis';

/** Longest a hit waits in this process before Redis counts it. */
export const FLUSH_MS = 20;
/** A view older than this is not trusted: the next hit asks Redis first. */
export const FRESH_MS = 200;
export const MAX_BATCH = 50;

/** Unsent hits a node may hold for a key with this limit. */
export function batchOf(max: number): number {
  return max < 20 ? 0 : Math.min(MAX_BATCH, Math.floor(max / 20));
}

const ADD_HITS = `
  local current = redis.call('INCRBY', KEYS[1], ARGV[2])
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl < 0 then
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
    ttl = tonumber(ARGV[1])
  end
  return {current, ttl}`;

type Callback = (error: Error | null, state?: { current: number; ttl: number }) => void;

interface KeyView {
  /** The shared count at the last reply from Redis, this node's sent hits included. */
  known: number;
  /** Hits counted here and not yet sent. */
  pending: number;
  /** Hits sent to Redis whose reply has not come back (not yet in `known`). */
  inflight: number;
  /** When the window ends (this process's clock), from the last reply's TTL. */
  resetAt: number;
  syncedAt: number;
}

type AddHits = (key: string, windowMs: number, hits: number) => Promise<[number, number]>;

class BatchedRedisStore {
  private readonly views = new Map<string, KeyView>();
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly addHits: AddHits,
    private readonly prefix: string,
  ) {}

  incr(key: string, callback: Callback, windowMs: number, max: number): void {
    const now = Date.now();
    const view = this.views.get(key);
    const batch = batchOf(max);
    const live = view !== undefined && now < view.resetAt;
    const local =
      live &&
      batch > 0 &&
      now - view.syncedAt <= FRESH_MS &&
      view.known + view.inflight + view.pending + 1 <= max - 2 * batch;
    if (!local) {
      // The window's first hit here, a stale view, or the last two batches before the limit: Redis
      // counts this hit (with any unsent ones) and its answer decides.
      const hits = 1 + (live ? view.pending : 0);
      if (view) view.pending = 0;
      this.send(key, windowMs, hits).then(
        (state) => callback(null, state),
        (error: Error) => callback(error),
      );
      return;
    }
    if (view.pending >= batch) {
      // This node holds all it may: the hit waits for the batch to reach Redis.
      this.flush(windowMs).then(
        () => this.incr(key, callback, windowMs, max),
        (error: Error) => callback(error),
      );
      return;
    }
    view.pending += 1;
    this.schedule(windowMs);
    callback(null, { current: view.known + view.inflight + view.pending, ttl: view.resetAt - now });
  }

  /** A route with limits of its own (sign-in) counts under keys of its own, as RedisStore's child does. */
  child(routeOptions: object): BatchedRedisStore {
    // At run time the package passes the route's merged limit options, routeInfo among them (its
    // types say RouteOptions).
    const { routeInfo } = routeOptions as { routeInfo: { method: string; url: string } };
    return new BatchedRedisStore(this.addHits, `${this.prefix}${routeInfo.method}${routeInfo.url}-`);
  }

  /** Adds `hits` to the shared count; answers with the count Redis gave the last of them. */
  private async send(key: string, windowMs: number, hits: number): Promise<{ current: number; ttl: number }> {
    const before = this.views.get(key);
    if (before) before.inflight += hits;
    let reply: [number, number];
    try {
      reply = await this.addHits(this.prefix + key, windowMs, hits);
    } finally {
      if (before && this.views.get(key) === before) before.inflight -= hits;
    }
    const [current, ttl] = reply;
    const now = Date.now();
    const view = this.views.get(key);
    if (view && now < view.resetAt) {
      // Replies may cross: the shared count never goes back within a window. Hits counted here
      // while the reply travelled stay pending (or in flight) on top of it.
      view.known = Math.max(view.known, current);
      view.resetAt = now + ttl;
      view.syncedAt = now;
    } else {
      this.views.set(key, { known: current, pending: 0, inflight: 0, resetAt: now + ttl, syncedAt: now });
    }
    // Redis's count for these hits decides, not the view: a view raised by a crossing reply would
    // refuse a hit Redis placed within the limit.
    return { current, ttl };
  }

  private schedule(windowMs: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(windowMs).catch(() => {}), FLUSH_MS);
    this.timer.unref();
  }

  /** Sends every key's pending hits (one pipelined round trip); views without hits expire. */
  private flush(windowMs: number): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.flushing ??= (async () => {
      const now = Date.now();
      const sends: Promise<unknown>[] = [];
      for (const [key, view] of this.views) {
        if (now >= view.resetAt) this.views.delete(key);
        else if (view.pending > 0) {
          const hits = view.pending;
          view.pending = 0;
          sends.push(this.send(key, windowMs, hits));
        }
      }
      await Promise.all(sends);
    })().finally(() => (this.flushing = null));
    return this.flushing;
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
  return class extends BatchedRedisStore {
    constructor() {
      super(addHits, prefix);
    }
  };
}
