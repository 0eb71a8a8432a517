// GET /metrics: this process's own measures for a Prometheus scraper (public, like /health: no
// tenant data, only the process's delay and memory).
import { Type } from '@sinclair/typebox';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../plugins/access.ts';
import { renderMetrics } from './service.ts';

export default async function metricsRoutes(app: App, deps: ModuleDeps): Promise<void> {
  app.get(
    '/metrics',
    {
      config: { access: access.public(), rateLimit: false as const },
      schema: {
        tags: ['health'],
        summary: 'Prometheus text: event-loop delay (p99, max, mean since the previous scrape) and resident memory',
        produces: ['text/plain'],
        response: { 200: Type.String() },
      },
    },
    async (_request, reply) => reply.type('text/plain; version=0.0.4; charset=utf-8').send(renderMetrics(deps)),
  );
}
