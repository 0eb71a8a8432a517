// A real HTTP receiver for webhook tests (node:http on 127.0.0.1, random port) and a small driver
// that runs due webhook deliveries through the worker's real dispatcher, in this process.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { QueryTypes } from 'sequelize';
import type { TestContext } from './context.ts';
import type { WorkerContext } from '../../daemon/mail/worker-context.ts';
import type { DeliveryOutcome } from '../../daemon/modules/webhooks/attempt.ts';
import { createDispatcher, type Dispatcher, type DispatcherOptions } from '../../daemon/modules/webhooks/dispatcher.ts';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  receivedAt: number;
}

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** TCP connections accepted so far (keep-alive reuses them). */
  connections: number;
  /** Decides the answer of each request (default 200 "ok"). May wait to play a slow receiver. */
  respond: (
    request: ReceivedRequest,
  ) =>
    | Promise<{ status: number; body?: string; headers?: Record<string, string> }>
    | { status: number; body?: string; headers?: Record<string, string> };
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver = {
    url: '',
    port: 0,
    requests: [] as ReceivedRequest[],
    connections: 0,
    respond: (() => ({ status: 200, body: 'ok' })) as Receiver['respond'],
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      };
      receiver.requests.push(received);
      Promise.resolve(receiver.respond(received)).then(
        (answer) => {
          res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
          res.end(answer.body ?? '');
        },
        () => res.destroy(),
      );
    });
  });
  server.on('connection', () => (receiver.connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

export function workerContext(ctx: TestContext, workerId = 'test-webhook-worker'): WorkerContext {
  return {
    config: ctx.config,
    secrets: ctx.deps.secrets,
    ...ctx.workerResources,
    sequelize: ctx.db.sequelize,
    sql: ctx.db.sql,
    log: pino({ level: 'silent' }),
    workerId,
  };
}

export interface TestDispatcher extends Dispatcher {
  /** Every settled outcome, in the order they were settled. */
  outcomes: DeliveryOutcome[];
}

/** The worker's real dispatcher, in this process, on the test database. */
export function createTestDispatcher(ctx: TestContext, options: Partial<DispatcherOptions> = {}): TestDispatcher {
  const outcomes: DeliveryOutcome[] = [];
  const worker = workerContext(ctx, options.workerId);
  const dispatcher = createDispatcher(worker, {
    workerId: worker.workerId,
    leaseMs: 60_000,
    claimBatch: 200,
    maxHeld: 2_000,
    maxInFlightPerEndpoint: ctx.config.webhookMaxInFlightPerEndpoint,
    onSettled: (outcome) => outcomes.push(outcome),
    ...options,
  });
  return Object.assign(dispatcher, { outcomes });
}

async function pendingDue(ctx: TestContext): Promise<number> {
  const [{ left }] = await ctx.db.sequelize.query<{ left: number }>(
    `SELECT count(*)::int AS left FROM webhook_deliveries WHERE status = 'pending' AND due_at IS NOT NULL`,
    { type: QueryTypes.SELECT },
  );
  return left;
}

/** Claims what is due once, waits for every attempt to be settled, answers the outcomes. */
export async function runDueDeliveries(ctx: TestContext): Promise<DeliveryOutcome[]> {
  const dispatcher = createTestDispatcher(ctx);
  try {
    await dispatcher.claim();
    await dispatcher.idle();
    return dispatcher.outcomes;
  } finally {
    await dispatcher.stop(1_000);
  }
}

/** Keeps delivering until no delivery is pending (retries included) or time runs out. */
export async function drainWebhookDeliveries(ctx: TestContext, timeoutMs = 10_000): Promise<DeliveryOutcome[]> {
  const dispatcher = createTestDispatcher(ctx);
  const deadline = Date.now() + timeoutMs;
  try {
    while (Date.now() < deadline) {
      await dispatcher.claim();
      await dispatcher.idle();
      if ((await pendingDue(ctx)) === 0) return dispatcher.outcomes;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await dispatcher.stop(1_000);
  }
  throw new Error(`the webhook deliveries did not drain within ${timeoutMs} ms`);
}
