// The Fastify instance type every module registers its routes on (TypeBox-typed requests).
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Redis } from 'ioredis';
import type { Config } from './config.ts';
import type { Database } from './db/index.ts';
import type { Secrets } from './secrets.ts';

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression<RawServerDefault>,
  RawReplyDefaultExpression<RawServerDefault>,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface AppDeps {
  config: Config;
  db: Database;
  redis: Redis | null;
  secrets: Secrets;
  /** Prefix for Redis keys (tests give each run its own). */
  redisPrefix: string;
  /** Reports whether the worker threads are alive; absent on an api-only node. */
  workers?: { alive(): boolean; names(): string[] };
}
