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
import type { TenantStateCache } from './modules/tenants/state-cache.ts';
import type { AcceptGroups } from './modules/emails/accept-groups.ts';
import type { DkimKeys, MailResources } from './mail/resources.ts';
import type { EventLoopMonitor } from './modules/metrics/event-loop.ts';
import type { NodeMetrics } from './modules/metrics/registry.ts';

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
  /** The DKIM key cache the SMTP edge of this process shares (main.ts); absent: buildApp makes its own. */
  dkimSigning?: DkimKeys;
}

/** What buildApp hands its modules: the app's deps and the state buildApp creates for them. */
export interface ModuleDeps extends AppDeps, MailResources {
  dkimSigning: DkimKeys;
  /** API keys and tenant state, cached per app and invalidated across nodes (tenants/state-cache.ts). */
  tenantState: TenantStateCache;
  /** Group commit of this node's concurrent plain sends (emails/accept-groups.ts). */
  acceptGroups: AcceptGroups;
  /** What the readiness check has learnt once and need not ask again (health/service.ts). */
  readiness: ReadinessMemo;
  /** This process's event-loop delay, for /metrics and the doctor (metrics/event-loop.ts). */
  eventLoop: EventLoopMonitor;
  /** The node's Prometheus registry (metrics/registry.ts), for /metrics and its own listener. */
  metrics: NodeMetrics;
}

/** Per app (buildApp creates it): migrations applied stay applied while it runs, so readiness stops asking. */
export interface ReadinessMemo {
  migrationsKnownApplied: boolean;
}
