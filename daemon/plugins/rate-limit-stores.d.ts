// @fastify/rate-limit's two stores, which the package ships without types. Only the constructors
// createAttemptCounter (./rate-limit.ts) uses are declared; it narrows the instances itself.
declare module '@fastify/rate-limit/store/LocalStore.js' {
  export default class LocalStore {
    constructor(continueExceeding: boolean, exponentialBackoff: boolean, cache?: number);
  }
}
declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { Redis } from 'ioredis';
  export default class RedisStore {
    constructor(continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string);
  }
}
