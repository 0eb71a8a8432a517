// Measurement 1: the accept rate of POST /emails/send (API key, async) under autocannon, beside a
// bare Fastify route doing one pg INSERT and a bare Fastify route doing nothing. Every target gets
// the same body, connections and duration, after a short warm-up whose figures are dropped.
import autocannon from 'autocannon';
import { cpuTimeMs } from './children.ts';
import { sendBody } from './message.ts';

export interface AcceptFigures {
  label: string;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  latencyMaxMs: number;
  requests: number;
  /** CPU time the server process spent per answered request during the measured run (Linux). */
  serverCpuMsPerRequest: number | null;
  /** SQL statements the server sent per answered request, warm-up included (the daemon only: the baseline sends one). */
  statementsPerRequest?: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
}

export interface AcceptRunOptions {
  connections: number;
  durationSeconds: number;
  /** Requests sent (and all answered) before the measured run. */
  warmupRequests: number;
}

const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;

export async function measureAcceptRate(
  label: string,
  baseUrl: string,
  headers: Record<string, string>,
  options: AcceptRunOptions,
  serverPid: number,
): Promise<AcceptFigures> {
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
  // A warm-up by count, not duration: autocannon then waits for every answer, so no abandoned
  // requests are still being served when the measured run starts.
  if (options.warmupRequests > 0) await autocannon({ ...request, amount: options.warmupRequests });
  const cpuBefore = cpuTimeMs(serverPid);
  const result = await autocannon({ ...request, duration: options.durationSeconds });
  const cpuAfter = cpuTimeMs(serverPid);
  const statusCodes = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count]),
  );
  return {
    label,
    requestsPerSecond: round(result['2xx'] / result.duration, 0),
    latencyP50Ms: round(result.latency.p50),
    latencyP99Ms: round(result.latency.p99),
    latencyMaxMs: round(result.latency.max),
    requests: result.requests.total,
    serverCpuMsPerRequest:
      cpuBefore === null || cpuAfter === null || result.requests.total === 0
        ? null
        : round((cpuAfter - cpuBefore) / result.requests.total, 2),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCodes,
  };
}
