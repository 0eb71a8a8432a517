// GET /metrics on the API's port: the node's Prometheus registry (registry.ts), behind METRICS_TOKEN
// when it is set. With METRICS_PORT the route is not here at all (404): the metrics are served by
// their own listener (listener.ts) on an internal address.
import { Type } from '@sinclair/typebox';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../access.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import { refuseScrape } from './guard.ts';

export default async function metricsRoutes(app: App, deps: ModuleDeps): Promise<void> {
  if (deps.config.metricsPort !== null) return;
  app.get(
    '/metrics',
    {
      // Its own guard (METRICS_TOKEN), not a tenant's credentials; a scraper is not rate-limited.
      config: { access: access.public(), rateLimit: false as const },
      schema: {
        tags: ['health'],
        summary:
          'Prometheus text: process, event-loop delay and API latency histograms, delivery and webhook counters, queue depths (docs/metrics.md). Bearer METRICS_TOKEN when set.',
        produces: ['text/plain'],
        response: { 200: Type.String(), 401: ErrorBody },
      },
    },
    async (request, reply) => {
      const refused = refuseScrape(deps.config, request.headers.authorization);
      if (refused) throw refused;
      return reply.type(deps.metrics.contentType).send(await deps.metrics.render());
    },
  );
}
