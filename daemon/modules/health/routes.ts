// Health checks: liveness, readiness (database, migrations, workers), and each dependency.
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { checkDatabase, checkQueues, checkReadiness, checkRedis } from './service.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { DatabaseHealth, Liveness, QueuesHealth, Readiness, RedisHealth } from '../../../shared/schemas/health.ts';

export default async function healthRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const tags = ['health'];
  const open = { access: access.public(), rateLimit: false as const };

  app.get(
    '/health',
    {
      config: open,
      schema: { tags, summary: 'Liveness', response: { 200: Liveness } },
    },
    async () => ({ status: 'ok' as const, uptimeSeconds: Math.round(process.uptime()) }),
  );

  app.get(
    '/health/ready',
    {
      config: open,
      schema: {
        tags,
        summary: 'Readiness: database reachable, migrations applied, workers alive',
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (_request, reply) => {
      const result = await checkReadiness(deps);
      return reply.code(result.status === 'ready' ? 200 : 503).send(result);
    },
  );

  app.get(
    '/health/db',
    {
      config: open,
      schema: { tags, summary: 'Database round trip', response: { 200: DatabaseHealth, 503: DatabaseHealth } },
    },
    async (_request, reply) => {
      const check = await checkDatabase(deps);
      return reply.code(check.ok ? 200 : 503).send({ ...check, embedded: deps.db.embedded });
    },
  );

  app.get(
    '/health/redis',
    {
      config: open,
      schema: {
        tags,
        summary: 'Cache store: Redis, or the in-process store when REDIS_URL is unset',
        response: { 200: RedisHealth, 503: RedisHealth },
      },
    },
    async (_request, reply) => {
      const check = await checkRedis(deps);
      return reply.code(check.ok ? 200 : 503).send(check);
    },
  );

  app.get(
    '/health/queues',
    {
      config: { access: access.bearer() },
      schema: {
        tags,
        summary:
          'Queue depth, oldest waiting age and running count per queue, and the outbound spool (its destinations to platform admins); stuck when work waits too long',
        response: { 200: QueuesHealth, 401: ErrorBody, 503: ErrorBody },
      },
    },
    async (request) =>
      checkQueues(deps, {
        platformAdmin: request.principal?.kind === 'admin' && request.principal.isPlatformAdmin,
      }),
  );
}
