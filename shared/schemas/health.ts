// Health answers: liveness, readiness, each dependency and the queues (daemon routes and svc's
// `daemon status` / dashboard read the same shapes).
import { Type, type Static } from '@sinclair/typebox';
import { OutboundHealth } from './outbound-queue.ts';

export const HealthCheck = Type.Object({
  ok: Type.Boolean(),
  latencyMs: Type.Optional(Type.Number()),
  error: Type.Optional(Type.String()),
});

export const Liveness = Type.Object({ status: Type.Literal('ok'), uptimeSeconds: Type.Number() });

export const ReadyWarning = Type.Object({
  code: Type.String({ description: 'SYSTEM_SENDER_NOT_ROUTABLE, SYSTEM_MAIL_UNSIGNED or SYSTEM_SENDER_UNKNOWN' }),
  message: Type.String(),
  fix: Type.String(),
});
export type ReadyWarning = Static<typeof ReadyWarning>;

export const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not-ready')]),
  checks: Type.Object({
    database: HealthCheck,
    migrations: Type.Object({ ok: Type.Boolean(), pending: Type.Array(Type.String()) }),
    workers: Type.Object({ ok: Type.Boolean(), role: Type.String(), names: Type.Array(Type.String()) }),
  }),
  warnings: Type.Array(ReadyWarning, {
    description: 'what works but needs the operator (never makes the node not-ready)',
  }),
});
export type Readiness = Static<typeof Readiness>;

export const RedisHealth = Type.Object({
  ok: Type.Boolean(),
  mode: Type.Union([Type.Literal('redis'), Type.Literal('memory')]),
  latencyMs: Type.Optional(Type.Number()),
  error: Type.Optional(Type.String()),
});

export const DatabaseHealth = Type.Object({
  ok: Type.Boolean(),
  embedded: Type.Boolean(),
  latencyMs: Type.Optional(Type.Number()),
  error: Type.Optional(Type.String()),
});

export const QueueStats = Type.Object({
  depth: Type.Integer({ description: 'jobs due now and not taken by a worker' }),
  oldestWaitingAgeMs: Type.Integer({ description: 'age of the oldest due job (0 when none waits)' }),
  running: Type.Integer({ description: 'jobs leased by a worker' }),
  scheduled: Type.Integer({ description: 'jobs whose run time is still ahead' }),
  failed: Type.Integer({ description: 'jobs that ran out of attempts (kept for inspection)' }),
  stuck: Type.Boolean({ description: 'the oldest due job has waited longer than QUEUE_STUCK_AFTER_MS' }),
});
export type QueueStats = Static<typeof QueueStats>;

export const QueuesHealth = Type.Object({
  ok: Type.Boolean(),
  stuckAfterMs: Type.Integer(),
  queues: Type.Record(Type.String(), QueueStats),
  outbound: OutboundHealth,
});
export type QueuesHealth = Static<typeof QueuesHealth>;
