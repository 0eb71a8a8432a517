// Measurement 1: the accept rate of POST /emails/send (API key, async) under autocannon, beside a
// bare Fastify route doing one pg INSERT and a bare Fastify route doing nothing. Every target gets
// the same body, connections and duration, after a short warm-up whose figures are dropped.
import autocannon from 'autocannon';
import { sendBody } from './message.ts';

export interface AcceptFigures {
  label: string;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  requests: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
}

export interface AcceptRunOptions {
  connections: number;
  durationSeconds: number;
  warmupSeconds: number;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

export async function measureAcceptRate(label: string, baseUrl: string, headers: Record<string, string>, options: AcceptRunOptions): Promise<AcceptFigures> {
  // No Idempotency-Key: every request is a new send (the pipeline dedupes only on a key).
  const request = {
    url: `${baseUrl}/emails/send`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(sendBody('Reader <reader@example.com>', 'Your weekly summary')),
    connections: options.connections,
    pipelining: 1,
    timeout: 30,
  };
  if (options.warmupSeconds > 0) await autocannon({ ...request, duration: options.warmupSeconds });
  const result = await autocannon({ ...request, duration: options.durationSeconds });
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count]));
  return {
    label,
    requestsPerSecond: round(result['2xx'] / result.duration, 0),
    latencyP50Ms: round(result.latency.p50),
    latencyP99Ms: round(result.latency.p99),
    latencyMaxMs: round(result.latency.max),
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCodes,
  };
}
