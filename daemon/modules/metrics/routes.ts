// GET /metrics: this process's own measures for a Prometheus scraper (public, like /health: no
// tenant data, only the process's delay and memory, and the platform's count of inbound reports kept
// without effect).
import { Type } from '@sinclair/typebox';
import type { App, ModuleDeps } from '../../app-types.ts';
import { access } from '../../plugins/access.ts';
import { cachedLoad, TtlCache } from '../../ttl-cache.ts';
import { inboundReportMetrics } from '../inbound/kept-report-service.ts';
import { renderMetrics } from './service.ts';

/**
 * The kept-report counts are a GROUP BY over a table that strangers can grow, behind a public route
 * with no rate limit: a node reads them at most this often, however often it is scraped.
 */
const KEPT_REPORT_COUNTS_TTL_MS = 15_000;

export default async function metricsRoutes(app: App, deps: ModuleDeps): Promise<void> {
  const keptReportCounts = new TtlCache<Promise<string>>(KEPT_REPORT_COUNTS_TTL_MS, 1);
  app.get(
    '/metrics',
    {
      config: { access: access.public(), rateLimit: false as const },
      schema: {
        tags: ['health'],
        summary:
          'Prometheus text: event-loop delay (p99, max, mean since the previous scrape), resident memory, and svc_inbound_reports_kept_total by disposition and kind',
        produces: ['text/plain'],
        response: { 200: Type.String() },
      },
    },
    async (_request, reply) => {
      const kept = await cachedLoad(keptReportCounts, 'counts', () => inboundReportMetrics(deps));
      return reply.type('text/plain; version=0.0.4; charset=utf-8').send(renderMetrics(deps) + kept);
    },
  );
}
