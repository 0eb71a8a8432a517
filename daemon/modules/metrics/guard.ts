// Who may read /metrics. METRICS_TOKEN set: a bearer token, compared in constant time (both sides
// hashed first, so neither the comparison nor its length tells anything). Not set: anyone who reaches
// the listener — which is why METRICS_HOST/METRICS_PORT can move it off the public API (listener.ts),
// and why `svc doctor` warns when neither guards it (doctor/metrics-exposure.ts).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.ts';
import { UnauthorizedError } from '../../errors.ts';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Null when the request may read the metrics; else the 401 to answer. */
export function refuseScrape(
  config: Pick<Config, 'metricsToken'>,
  authorization: string | undefined,
): UnauthorizedError | null {
  if (!config.metricsToken) return null;
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1] ?? '';
  if (presented && timingSafeEqual(digest(presented), digest(config.metricsToken))) return null;
  return new UnauthorizedError('The metrics need a token: send Authorization: Bearer <METRICS_TOKEN>.');
}
