// A real HTTP receiver for webhook tests (node:http on 127.0.0.1, random port) and a small driver
// that runs the 'webhook' queue's jobs through the real queue primitives and the real handler.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { Sequelize } from 'sequelize';
import type { TestContext } from './context.ts';
import { claimJobs, completeJob, failJob, retryJob } from '../../daemon/queue/index.ts';
import type { JobOutcome, WorkerContext } from '../../daemon/queue/types.ts';
import { handleWebhookJob } from '../../daemon/modules/webhooks/delivery-job.ts';

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
  /** Decides the answer of each request (default 200 "ok"). May wait to play a slow receiver. */
  respond: (request: ReceivedRequest) => Promise<{ status: number; body?: string; headers?: Record<string, string> }> | { status: number; body?: string; headers?: Record<string, string> };
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const receiver = {
    url: '',
    port: 0,
    requests: [] as ReceivedRequest[],
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
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  receiver.port = port;
  receiver.url = `http://127.0.0.1:${port}/hooks`;
  receiver.close = () => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return receiver;
}

export function workerContext(ctx: TestContext, workerId = 'test-webhook-worker'): WorkerContext {
  return { config: ctx.config, secrets: ctx.deps.secrets, sequelize: ctx.db.sequelize, sql: ctx.db.sql, log: pino({ level: 'silent' }), workerId };
}

async function settle(sequelize: Sequelize, jobId: string, workerId: string, outcome: JobOutcome): Promise<void> {
  switch (outcome.kind) {
    case 'done':
      await completeJob(sequelize, jobId, workerId);
      return;
    case 'retry':
      await retryJob(sequelize, jobId, workerId, outcome.delayMs, outcome.error);
      return;
    case 'fail':
      await failJob(sequelize, jobId, workerId, outcome.error);
      return;
  }
}

/** Claims every due webhook job once, runs them side by side, and settles each outcome. */
export async function runDueWebhookJobs(ctx: TestContext, workerId = 'test-webhook-worker'): Promise<JobOutcome[]> {
  const worker = workerContext(ctx, workerId);
  const jobs = await claimJobs(ctx.db.sequelize, 'webhook', workerId, 50, 60_000);
  return Promise.all(jobs.map(async (job) => {
    const outcome = await handleWebhookJob(job, worker);
    await settle(ctx.db.sequelize, job.id, workerId, outcome);
    return outcome;
  }));
}

/** Keeps running due webhook jobs until the queue holds none (retries included) or time runs out. */
export async function drainWebhookQueue(ctx: TestContext, timeoutMs = 10_000): Promise<JobOutcome[]> {
  const outcomes: JobOutcome[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    outcomes.push(...(await runDueWebhookJobs(ctx)));
    const [{ left }] = await ctx.db.sequelize.query<{ left: number }>(`SELECT count(*)::int AS left FROM jobs WHERE queue = 'webhook'`, { type: 'SELECT' as never });
    if (left === 0) return outcomes;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`the webhook queue did not drain within ${timeoutMs} ms`);
}
