// The daemon's real webhook-worker thread (Bree, handler registered in daemon/jobs/handlers.ts)
// delivers an event emitted in a transaction, and retries a failing endpoint 5 times then stops.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pino from 'pino';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { DAEMON_WORKERS, startWorkers, type WorkerPool } from '../daemon/jobs/index.ts';
import { emitEvent } from '../daemon/modules/webhooks/events.ts';
import { verifyWebhookSignature } from '../shared/webhooks.ts';
import { nothingWithin, waitFor } from './helpers/wait.ts';
import { parsePrometheusText, type Exposition } from './helpers/prometheus-text.ts';

let ctx: TestContext;
let receiver: Receiver;
let pool: WorkerPool;
test.before(async () => {
  ctx = await createTestContext({ env: { WEBHOOK_RETRY_BASE_MS: '50' } });
  receiver = await startReceiver();
  pool = await startWorkers({
    config: ctx.config,
    databaseUrl: ctx.databaseUrl,
    secrets: ctx.deps.secrets,
    log: pino({ level: 'silent' }),
    workers: DAEMON_WORKERS.filter((worker) => worker.name === 'webhook-worker'),
    tuning: { pollMs: 100, embeddedPollMs: 50 },
  });
});
test.after(async () => {
  await pool?.stop();
  await receiver?.close();
  await ctx?.close();
});

/** The app's /metrics, which the worker thread's counts reach over the threads' BroadcastChannel. */
async function scrape(): Promise<Exposition> {
  return parsePrometheusText((await ctx.app.inject({ method: 'GET', url: '/metrics' })).body);
}
const webhookOutcome = (exposition: Exposition, outcome: string) =>
  exposition.value('svc_webhook_deliveries_total', { outcome });

test('an emitted event reaches the receiver through the worker thread, signed', async () => {
  assert.ok(pool.alive());
  const { asKey, tenantId } = await createWorld(ctx.app);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: asKey,
    payload: { url: receiver.url, events: ['email.sent'] },
  });
  const endpoint = created.json();
  const eventId = await emitEvent(ctx.db.sequelize, { tenantId, type: 'email.sent', data: { emailId: 'e-1' } });
  await waitFor('the delivery', async () => receiver.requests.length === 1);
  const body = verifyWebhookSignature({
    payload: receiver.requests[0].rawBody,
    header: receiver.requests[0].headers['x-service-signature'],
    secret: endpoint.secret,
  }) as { id: string };
  assert.is(body.id, eventId);
  await waitFor('the delivery row', async () => {
    const [row] = await ctx.db.sequelize.query<{ status: string }>(
      `SELECT status FROM webhook_deliveries WHERE event_id = :eventId`,
      { replacements: { eventId }, type: QueryTypes.SELECT },
    );
    return row?.status === 'succeeded';
  });
  // Counted in the worker thread, with the lag from the event to the receiver's 2xx.
  await waitFor('the thread’s counts in /metrics', async () => webhookOutcome(await scrape(), 'succeeded') === 1);
  const exposition = await scrape();
  assert.is(exposition.value('svc_webhook_delivery_lag_seconds_count'), 1);
  assert.ok(exposition.value('svc_webhook_delivery_lag_seconds_sum')! < 60);
});

test('a failing endpoint is tried 5 times with growing gaps, then the delivery stops as failed', async () => {
  receiver.requests.length = 0;
  receiver.respond = () => ({ status: 500, body: 'down' });
  const { asKey, tenantId } = await createWorld(ctx.app);
  await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/endpoints',
    headers: asKey,
    payload: { url: receiver.url, events: ['email.failed'] },
  });
  const eventId = await emitEvent(ctx.db.sequelize, { tenantId, type: 'email.failed', data: {} });
  await waitFor('the fifth attempt', async () => {
    const [row] = await ctx.db.sequelize.query<{ status: string }>(
      `SELECT status FROM webhook_deliveries WHERE event_id = :eventId`,
      { replacements: { eventId }, type: QueryTypes.SELECT },
    );
    return row?.status === 'failed';
  });
  await nothingWithin(1000); // no sixth attempt after the fifth failed
  assert.is(receiver.requests.length, 5);
  const gaps = receiver.requests.slice(1).map((r, i) => r.receivedAt - receiver.requests[i].receivedAt);
  assert.ok(gaps[3] > gaps[0], `gaps grow: ${gaps.join(', ')}`);
  const [row] = await ctx.db.sequelize.query<{ attempt: number; status_code: number }>(
    `SELECT attempt, status_code FROM webhook_deliveries WHERE event_id = :eventId`,
    { replacements: { eventId }, type: QueryTypes.SELECT },
  );
  assert.equal([row.attempt, row.status_code], [5, 500]);
  const [failed] = await ctx.db.sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM jobs WHERE queue = 'webhook'`,
    { type: QueryTypes.SELECT },
  );
  assert.is(failed.n, 0, 'deliveries are not jobs');
  await waitFor('the failure in /metrics', async () => webhookOutcome(await scrape(), 'failed') === 1);
  const exposition = await scrape();
  assert.is(webhookOutcome(exposition, 'retried'), 4);
  assert.is(exposition.value('svc_webhook_delivery_lag_seconds_count'), 1, 'a failure has no lag');
});

test.run();
