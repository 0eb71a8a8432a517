// Health checks: liveness, readiness (database, migrations, workers), and each dependency.
import { Type } from '@sinclair/typebox';
import type { App, AppDeps } from '../../app-types.ts';
import { access } from '../../plugins/access.ts';
import { checkDatabase, checkQueues, checkReadiness, checkRedis } from './service.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';

const Check = Type.Object({ ok: Type.Boolean(), latencyMs: Type.Optional(Type.Number()), error: Type.Optional(Type.String()) });
const ReadyBody = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not-ready')]),
  checks: Type.Object({
    database: Check,
    migrations: Type.Object({ ok: Type.Boolean(), pending: Type.Array(Type.String()) }),
    workers: Type.Object({ ok: Type.Boolean(), role: Type.String(), names: Type.Array(Type.String()) }),
  }),
  warnings: Type.Array(Type.Object({
    code: Type.String({ description: 'SYSTEM_SENDER_NOT_ROUTABLE, SYSTEM_MAIL_UNSIGNED or SYSTEM_SENDER_UNKNOWN' }),
    message: Type.String(),
    fix: Type.String(),
  }), { description: 'what works but needs the operator (never makes the node not-ready)' }),
});
const RedisBody = Type.Object({ ok: Type.Boolean(), mode: Type.Union([Type.Literal('redis'), Type.Literal('memory')]), latencyMs: Type.Optional(Type.Number()), error: Type.Optional(Type.String()) });
const QueueStatsBody = Type.Object({
  depth: Type.Integer({ description: 'jobs due now and not taken by a worker' }),
  oldestWaitingAgeMs: Type.Integer({ description: 'age of the oldest due job (0 when none waits)' }),
  running: Type.Integer({ description: 'jobs leased by a worker' }),
  scheduled: Type.Integer({ description: 'jobs whose run time is still ahead' }),
  failed: Type.Integer({ description: 'jobs that ran out of attempts (kept for inspection)' }),
  stuck: Type.Boolean({ description: 'the oldest due job has waited longer than QUEUE_STUCK_AFTER_MS' }),
});
const QueuesBody = Type.Object({
  ok: Type.Boolean(),
  stuckAfterMs: Type.Integer(),
  queues: Type.Record(Type.String(), QueueStatsBody),
});
const DbBody = Type.Object({ ok: Type.Boolean(), embedded: Type.Boolean(), latencyMs: Type.Optional(Type.Number()), error: Type.Optional(Type.String()) });

export default async function healthRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['health'];
  const open = { access: access.public(), rateLimit: false as const };

  app.get('/health', {
    config: open,
    schema: { tags, summary: 'Liveness', response: { 200: Type.Object({ status: Type.Literal('ok'), uptimeSeconds: Type.Number() }) } },
  }, async () => ({ status: 'ok' as const, uptimeSeconds: Math.round(process.uptime()) }));

  app.get('/health/ready', {
    config: open,
    schema: { tags, summary: 'Readiness: database reachable, migrations applied, workers alive', response: { 200: ReadyBody, 503: ReadyBody } },
  }, async (_request, reply) => {
    const result = await checkReadiness(deps);
    return reply.code(result.status === 'ready' ? 200 : 503).send(result);
  });

  app.get('/health/db', {
    config: open,
    schema: { tags, summary: 'Database round trip', response: { 200: DbBody, 503: DbBody } },
  }, async (_request, reply) => {
    const check = await checkDatabase(deps);
    return reply.code(check.ok ? 200 : 503).send({ ...check, embedded: deps.db.embedded });
  });

  app.get('/health/redis', {
    config: open,
    schema: { tags, summary: 'Cache store: Redis, or the in-process store when REDIS_URL is unset', response: { 200: RedisBody, 503: RedisBody } },
  }, async (_request, reply) => {
    const check = await checkRedis(deps);
    return reply.code(check.ok ? 200 : 503).send(check);
  });

  app.get('/health/queues', {
    config: { access: access.bearer() },
    schema: {
      tags,
      summary: 'Queue depth, oldest waiting age and running count per queue; stuck when work waits too long',
      response: { 200: QueuesBody, 401: ErrorBody, 503: ErrorBody },
    },
  }, async () => checkQueues(deps));
}
