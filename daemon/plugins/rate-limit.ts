// Request throttling with @fastify/rate-limit. Counters live in Redis when REDIS_URL is set, so
// every daemon sharing it sees the same numbers (counted here and sent in batches:
// rate-limit-batched-store.ts, with its tolerance); otherwise in this process.
// The client is the API key, else the signed-in admin, else the socket's address: X-Forwarded-For
// only counts when TRUST_PROXY is on, so a forged header cannot buy a fresh bucket.
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ChainableCommander, Redis } from 'ioredis';
import LocalStore from '@fastify/rate-limit/store/LocalStore.js';
import RedisStore from '@fastify/rate-limit/store/RedisStore.js';
import { TooManyRequestsError } from '../errors.ts';
import { batchedRedisStore } from './rate-limit-batched-store.ts';

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  authMax: number;
  authWindowMs: number;
  redis: Redis | null;
  /** Prefix of the Redis keys, so that tests and tenants of one Redis stay apart. */
  namespace: string;
}

export function clientKey(request: FastifyRequest): string {
  const principal = request.principal;
  if (principal?.kind === 'apiKey') return `key:${principal.apiKeyId}`;
  if (principal?.kind === 'admin') return `admin:${principal.adminId}`;
  return `ip:${request.ip}`;
}

interface StoreState {
  current: number;
  ttl: number;
}
interface CounterStore {
  incr(
    key: string,
    callback: (error: Error | null, state: StoreState | null) => void,
    windowMs: number,
    max: number,
  ): void;
  read(
    key: string,
    callback: (error: Error | null, state: StoreState | null) => void,
    windowMs: number,
    max: number,
  ): void;
}

export interface AttemptCounter {
  /** Attempts counted for `key` in its current window, and the milliseconds until it resets. */
  read(key: string): Promise<StoreState>;
  /** Counts one attempt. */
  hit(key: string): Promise<StoreState>;
  readonly max: number;
  /** Where its counts live in Redis (null: this process), for countTogether's one round trip. */
  readonly redis: { client: Redis; prefix: string; windowMs: number } | null;
}

/**
 * Counts attempts outside HTTP (the SMTP edge's failed AUTHs) in @fastify/rate-limit's own stores:
 * the same Redis counters as the HTTP limits when REDIS_URL is set, else this process's. An
 * unreachable Redis counts nothing rather than refusing everyone, as skipOnError does for HTTP.
 */
export function createAttemptCounter(options: {
  redis: Redis | null;
  namespace: string;
  max: number;
  windowMs: number;
}): AttemptCounter {
  const store = (options.redis
    ? new RedisStore(false, false, options.redis, `${options.namespace}rl:`)
    : new LocalStore(false, false, 10_000)) as unknown as CounterStore;
  const call = (method: 'incr' | 'read', key: string) =>
    new Promise<StoreState>((resolve) =>
      store[method](
        key,
        (error, state) => resolve(error || !state ? { current: 0, ttl: 0 } : state),
        options.windowMs,
        options.max,
      ),
    );
  return {
    read: (key) => call('read', key),
    hit: (key) => call('incr', key),
    max: options.max,
    redis: options.redis
      ? { client: options.redis, prefix: `${options.namespace}rl:`, windowMs: options.windowMs }
      : null,
  };
}

/** RedisStore's scripts (defined on the client when a store is made), as pipeline commands. */
type StorePipeline = ChainableCommander & {
  rateLimitRead(key: string): StorePipeline;
  rateLimit(key: string, windowMs: number, max: number, continueExceeding: boolean, backoff: boolean): StorePipeline;
};

/**
 * Reads or counts several counters' keys at once: the current counts, in order. Counters on one Redis
 * client go in one pipeline (the stores' own scripts on their own keys, so the counts are the same as
 * read/hit one by one: three round trips were ~10 % of the inbound listener's loop, issue 52 §5); an
 * unreachable Redis counts nothing, as for read and hit.
 */
export async function countTogether(
  counts: { counter: AttemptCounter; key: string }[],
  action: 'read' | 'hit',
): Promise<number[]> {
  const client = counts[0]?.counter.redis?.client;
  if (!client || counts.some(({ counter }) => counter.redis?.client !== client))
    return Promise.all(counts.map(async ({ counter, key }) => (await counter[action](key)).current));
  let pipeline = client.pipeline() as StorePipeline;
  for (const { counter, key } of counts) {
    const { prefix, windowMs } = counter.redis!;
    pipeline =
      action === 'hit'
        ? pipeline.rateLimit(`${prefix}${key}`, windowMs, counter.max, false, false)
        : pipeline.rateLimitRead(`${prefix}${key}`);
  }
  const answers = await pipeline.exec().catch(() => null);
  return counts.map((_, index) => {
    const [error, value] = answers?.[index] ?? [new Error('no answer'), null];
    return error || !Array.isArray(value) ? 0 : Number(value[0]) || 0;
  });
}

async function rateLimitPlugin(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: options.max,
    timeWindow: options.windowMs,
    keyGenerator: clientKey,
    nameSpace: `${options.namespace}rl:`,
    ...(options.redis ? { store: batchedRedisStore(options.redis, `${options.namespace}rl:`) } : {}),
    // When Redis is unreachable, serve rather than fail every request; /health/redis reports it.
    skipOnError: true,
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
      'retry-after': true,
    },
    errorResponseBuilder: (_request, context) => {
      const seconds = Math.max(1, Math.ceil(context.ttl / 1000));
      return new TooManyRequestsError(
        `Too many requests: the limit is ${context.max} per ${context.after}. Try again in ${seconds} s.`,
        seconds,
      );
    },
  });
  // @fastify/rate-limit writes X-RateLimit-Reset as the seconds left; spec §8 wants the Unix time
  // (seconds) at which the window resets.
  app.addHook('onSend', async (_request, reply) => {
    const secondsLeft = reply.getHeader('x-ratelimit-reset');
    if (secondsLeft !== undefined)
      reply.header('x-ratelimit-reset', String(Math.ceil(Date.now() / 1000) + Number(secondsLeft)));
  });
}

export default fp(rateLimitPlugin, { name: 'rate-limit' });
