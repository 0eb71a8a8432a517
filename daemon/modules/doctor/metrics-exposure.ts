// Who can read /metrics? It tells whoever reaches it this node's load, queues, delivery outcomes and
// when it stalls: worth a token or an internal listener (docs/metrics.md). A warning, not a failure
// (ok, with the fix), as the event-loop check: a deployment behind a firewall may be right as it is.
import type { Config } from '../../config.ts';
import type { DoctorCheck } from '../../../shared/schemas/doctor.ts';

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return bare === 'localhost' || bare.startsWith('127.') || bare === '::1';
}

export function checkMetricsExposure({ config }: { config: Config }): DoctorCheck {
  const name = 'metrics';
  if (config.metricsToken) return { name, ok: true, message: 'GET /metrics requires METRICS_TOKEN (a bearer token).' };
  if (config.metricsPort !== null)
    return {
      name,
      ok: true,
      message: `/metrics is served on its own listener ${config.metricsHost}:${config.metricsPort}, not on the API.`,
    };
  // Behind a proxy (TRUST_PROXY) the API is published whatever address it binds: so is /metrics.
  if (isLoopback(config.host) && !config.trustProxy)
    return { name, ok: true, message: `/metrics is on the API, which listens on loopback (${config.host}) only.` };
  return {
    name,
    ok: true,
    message: `Warning: /metrics is public — no METRICS_TOKEN, and it is served on the API's address ${config.host}:${config.port}${config.trustProxy ? ' behind a proxy' : ''}: anyone who reaches the API reads this node's queues, delivery outcomes and stalls.`,
    fix: 'Set METRICS_TOKEN (and give it to the scraper as a bearer token), or METRICS_PORT (with METRICS_HOST on an internal address) to serve /metrics apart from the API.',
  };
}
