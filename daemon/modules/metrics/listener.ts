// METRICS_PORT: /metrics on a listener of its own (METRICS_HOST, loopback by default), for a scraper
// on an internal network; the public API then no longer serves it (routes.ts). A plain node:http
// server with one route: nothing of the API (its plugins, body parsers, rate limits) runs here.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../../config.ts';
import { STATUS_TEXT, type ApiError, errorText } from '../../errors.ts';
import { refuseScrape } from './guard.ts';
import { createEventLoopMonitor, type EventLoopMonitor } from './event-loop.ts';
import { createNodeMetrics, type NodeMetrics, type NodeMetricsDeps } from './registry.ts';

export interface MetricsListener {
  /** http://host:port of the listener. */
  url: string;
  close(): Promise<void>;
}

/** CONTRACT.md's error body, as the API's error plugin writes it. */
function sendError(response: ServerResponse, error: Pick<ApiError, 'statusCode' | 'code' | 'message'>): void {
  response.writeHead(error.statusCode, { 'content-type': 'application/json; charset=utf-8' });
  response.end(
    JSON.stringify({
      statusCode: error.statusCode,
      error: STATUS_TEXT[error.statusCode] ?? 'Error',
      code: error.code,
      message: error.message,
    }),
  );
}

async function answer(
  metrics: NodeMetrics,
  config: Pick<Config, 'metricsToken'>,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (path !== '/metrics')
    return sendError(response, {
      statusCode: 404,
      code: 'NOT_FOUND',
      message: 'This listener serves GET /metrics only.',
    });
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return sendError(response, { statusCode: 405, code: 'METHOD_NOT_ALLOWED', message: 'Read the metrics with GET.' });
  const refused = refuseScrape(config, request.headers.authorization);
  if (refused) return sendError(response, refused);
  const text = await metrics.render();
  response.writeHead(200, { 'content-type': metrics.contentType });
  response.end(request.method === 'HEAD' ? undefined : text);
}

export async function listenForMetrics(
  metrics: NodeMetrics,
  config: Pick<Config, 'metricsToken' | 'metricsHost' | 'metricsPort'>,
  log: { error(details: object, message: string): void },
): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    // A request body is never read here: a scrape is a GET.
    answer(metrics, config, request, response).catch((error: unknown) => {
      log.error({ err: errorText(error) }, 'metrics listener: scrape failed');
      if (!response.headersSent)
        sendError(response, { statusCode: 500, code: 'INTERNAL', message: 'The metrics could not be read.' });
      else response.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.metricsPort ?? 0, config.metricsHost, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * main.ts's call with METRICS_PORT set: the listener for the API's registry, or — on a node without
 * the API (role worker or smtp) — for a registry of its own, so that a worker node's threads are
 * counted too. Closing it closes what it created.
 */
export async function startMetricsListener(options: {
  config: Config;
  db: NodeMetricsDeps['db'];
  log: NodeMetricsDeps['log'] & { error(details: object, message: string): void };
  /** The API's registry (app.ts metricsOf), or null on a node without the API. */
  metrics: NodeMetrics | null;
}): Promise<MetricsListener> {
  const { config, db, log } = options;
  let own: { metrics: NodeMetrics; eventLoop: EventLoopMonitor } | null = null;
  if (!options.metrics) {
    const eventLoop = createEventLoopMonitor();
    own = { eventLoop, metrics: createNodeMetrics({ config, db, eventLoop, log }) };
    own.metrics.startSampling();
  }
  const metrics = options.metrics ?? own!.metrics;
  try {
    const listener = await listenForMetrics(metrics, config, log);
    return {
      url: listener.url,
      async close() {
        await listener.close();
        own?.metrics.close();
        own?.eventLoop.close();
      },
    };
  } catch (error) {
    own?.metrics.close();
    own?.eventLoop.close();
    throw error;
  }
}
