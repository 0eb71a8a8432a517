// Request throttling with @fastify/rate-limit. Counters live in Redis when REDIS_URL is set, so
// every daemon sharing it sees the same numbers (counted here and sent in batches:
// rate-limit-batched-store.ts, with its tolerance); otherwise in this process.
// The client is the API key, else the signed-in admin, else the socket's address: X-Forwarded-For
// only counts when TRUST_PROXY is on, so a forged header cannot buy a fresh bucket.
import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
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
  return { read: (key) => call('read', key), hit: (key) => call('incr', key), max: options.max };
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
