// GET /metrics (daemon/modules/metrics, docs/metrics.md): valid Prometheus text that a scrape never
// changes (a stall stays in the event-loop histogram however often it is read), METRICS_TOKEN and
// METRICS_PORT guarding it, delivery counters fed by the send worker's own reporter, queue depths read
// from the database, and svc doctor's checks of the event loop and of who can read the metrics.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pino from 'pino';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addVerifiedDomain, createWorld } from './helpers/fixtures.ts';
import { startSmtpSink, type SmtpSink } from './helpers/smtp-sink.ts';
import { errorBodyProblem } from './helpers/error-body.ts';
import { longestBetween, parsePrometheusText, type Exposition } from './helpers/prometheus-text.ts';
import { waitFor } from './helpers/wait.ts';
import { api, killAllDaemons, seedSendWorld, startChildDaemon, stopChildDaemon } from './helpers/send-daemon.ts';
import { createServer } from 'node:net';
import { buildApp, metricsOf } from '../daemon/app.ts';
import { loadConfig, type Config } from '../daemon/config.ts';
import { runSendLoop } from '../daemon/jobs/send-loop.ts';
import { DEFAULT_TUNING } from '../daemon/jobs/tuning.ts';
import type { ThreadData, ThreadRuntime } from '../daemon/jobs/thread.ts';
import { createEventLoopMonitor } from '../daemon/modules/metrics/event-loop.ts';
import { startMetricsListener } from '../daemon/modules/metrics/listener.ts';
import { createMetricsReporter } from '../daemon/modules/metrics/reporter.ts';
import { createQueueDepthReader, QUEUE_DEPTH_TTL_MS } from '../daemon/modules/metrics/queue-depth.ts';
import { EVENT_LOOP_MAX_WARN_MS, runDoctor } from '../daemon/modules/doctor/service.ts';
import { checkMetricsExposure } from '../daemon/modules/doctor/metrics-exposure.ts';

const TOKEN = 'scrape-token-0123456789abcdef';
const INBOUND_TOKEN = 'inbound-token-0123456789';
const silent = pino({ level: 'silent' });
let ctx: TestContext;
let sink: SmtpSink;

test.before(async () => {
  sink = await startSmtpSink();
  ctx = await createTestContext({
    env: {
      SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
      PUBLIC_URL: 'http://mail.example.test',
      INBOUND_WEBHOOK_TOKEN: INBOUND_TOKEN,
    },
  });
});
test.after(async () => {
  killAllDaemons();
  await ctx?.close();
  await sink?.close();
});

async function scrape(app = ctx.app, headers: Record<string, string> = {}): Promise<Exposition> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers });
  assert.is(res.statusCode, 200, res.body);
  assert.match(res.headers['content-type'] as string, /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(res.body);
}

/** Holds the event loop for `ms`, as a synchronous parse of a stranger's attachment would. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Waits until the app's event-loop histogram and recent max hold a stall of `seconds` (read without a request). */
async function stallSampled(since: Exposition, seconds: number): Promise<void> {
  await waitFor(`a stall of ${seconds} s in the event-loop metrics`, async () => {
    const now = parsePrometheusText(await metricsOf(ctx.app)!.render());
    return (
      longestBetween(since, now, 'svc_event_loop_delay_seconds') >= seconds &&
      (now.value('svc_event_loop_delay_recent_max_seconds') ?? 0) >= seconds
    );
  });
}

/** An app on the test database with some settings of its own (closed by the caller). */
function appWith(settings: Partial<Config>) {
  return buildApp({ ...ctx.deps, config: { ...ctx.config, ...settings } }, { logger: false });
}

test('a scrape changes nothing: a stall stays in the event-loop histogram and the recent max, scrape after scrape', async () => {
  const before = await scrape();
  stall(300);
  await stallSampled(before, 0.25);
  const first = await scrape();
  const second = await scrape();
  for (const after of [first, second]) {
    assert.ok(longestBetween(before, after, 'svc_event_loop_delay_seconds') >= 0.25, 'the stall is in the buckets');
    assert.ok(after.value('svc_event_loop_delay_recent_max_seconds')! >= 0.25);
  }
  // The 300 ms observation is counted once, and is still there after the second read.
  const slow = (e: Exposition) =>
    e.value('svc_event_loop_delay_seconds_count')! - e.value('svc_event_loop_delay_seconds_bucket', { le: '0.25' })!;
  assert.is(slow(first) - slow(before), 1);
  assert.is(slow(second), slow(first));
  assert.is(first.types.get('svc_event_loop_delay_seconds'), 'histogram');
  assert.ok(first.value('process_resident_memory_bytes')! > 10 * 1024 ** 2);
  assert.ok(first.value('process_cpu_seconds_total')! > 0);
  // prom-client's own lag gauges reset at each collect: they are not exposed.
  assert.not.ok([...first.types.keys()].some((name) => name.startsWith('nodejs_eventloop_lag')));
  // Each scrape of the API is itself counted (one observe per request).
  const scrapes = (e: Exposition) =>
    e.value('svc_http_request_duration_seconds_count', { method: 'GET', route: '/metrics', status_code: '200' }) ?? 0;
  assert.is(scrapes(second), scrapes(first) + 1);
});

test('METRICS_TOKEN: without the bearer token a 401 with the error body; with it the metrics', async () => {
  const app = await appWith({ metricsToken: TOKEN });
  try {
    for (const headers of [{}, { authorization: 'Bearer wrong-token-of-the-same-len' }, { authorization: TOKEN }]) {
      const res = await app.inject({ method: 'GET', url: '/metrics', headers });
      assert.is(res.statusCode, 401, res.body);
      assert.is(errorBodyProblem(res), null);
      assert.match(res.json().message, /METRICS_TOKEN/);
      assert.not.match(res.body, /svc_|process_/);
    }
    const exposition = await scrape(app, { authorization: `Bearer ${TOKEN}` });
    assert.ok(exposition.types.has('svc_delivery_outcomes_total'));
  } finally {
    await app.close();
  }
});

test('METRICS_PORT: the metrics on a listener of their own (token too), and no longer on the API', async () => {
  const app = await appWith({ metricsPort: 1, metricsHost: '127.0.0.1', metricsToken: TOKEN });
  // Port 0 for the test's listener: the OS picks a free one.
  const listener = await startMetricsListener({
    config: { ...ctx.config, metricsPort: 0, metricsHost: '127.0.0.1', metricsToken: TOKEN },
    db: ctx.db,
    log: silent,
    metrics: metricsOf(app),
  });
  try {
    const onApi = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.is(onApi.statusCode, 404, onApi.body);
    const refused = await fetch(`${listener.url}/metrics`);
    const refusedBody = await refused.text();
    assert.is(refused.status, 401);
    assert.is(
      errorBodyProblem({
        statusCode: 401,
        headers: { 'content-type': refused.headers.get('content-type') },
        body: refusedBody,
      }),
      null,
    );
    const res = await fetch(`${listener.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.is(res.status, 200);
    const exposition = parsePrometheusText(await res.text());
    assert.ok(exposition.types.has('svc_queue_depth'));
    assert.is((await fetch(`${listener.url}/other`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404);
  } finally {
    await listener.close();
    await app.close();
  }
  // A node without the API (role worker) serves a registry of its own there.
  const own = await startMetricsListener({
    config: { ...ctx.config, metricsPort: 0, metricsHost: '127.0.0.1' },
    db: ctx.db,
    log: silent,
    metrics: null,
  });
  try {
    const exposition = parsePrometheusText(await (await fetch(`${own.url}/metrics`)).text());
    assert.ok(exposition.types.has('svc_delivery_outcomes_total'));
    assert.ok(exposition.value('process_resident_memory_bytes')! > 0);
  } finally {
    await own.close();
  }
});

/** The send worker's loop in this process, with its own reporter, until no send job is due or held. */
async function drainSends(): Promise<void> {
  const stop = new AbortController();
  const runtime = {
    data: { databaseUrl: '' } as ThreadData,
    ctx: {
      config: ctx.config,
      secrets: ctx.deps.secrets,
      ...ctx.workerResources,
      sequelize: ctx.db.sequelize,
      sql: ctx.db.sql,
      log: silent,
      workerId: 'metrics-test',
    },
    tuning: { ...DEFAULT_TUNING, embeddedPollMs: 20 },
    signal: stop.signal,
    embedded: true,
    metrics: createMetricsReporter(),
  } satisfies ThreadRuntime;
  const loop = runSendLoop(runtime);
  try {
    await waitFor('no send job due or held', async () => {
      const { rows } = await ctx.db.sql.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE queue = 'send' AND (locked_by IS NOT NULL OR run_at <= now())`,
      );
      return rows[0].n === 0;
    });
  } finally {
    stop.abort();
    await loop;
    runtime.metrics.close();
  }
}

test('delivery counters grow with what the send worker recorded: relayed recipients delivered, a 451 deferred', async () => {
  const world = await createWorld(ctx.app);
  await addVerifiedDomain(ctx.db.sequelize, ctx.deps.secrets, world.tenantId);
  const labels = (outcome: string) => ({ outcome, route: 'relay', provider: '' });
  const before = await scrape();
  assert.is(before.value('svc_delivery_outcomes_total', labels('delivered')), 0);
  // The third message the sink receives is answered 451 at DATA: the relay defers it.
  sink.behaviour.onData = (count) => (count === 3 ? { code: 451, message: 'try again later' } : null);
  const sends = [
    { to: ['one@example.test'], cc: ['two@example.test'] },
    { to: ['three@example.test'] },
    { to: ['four@example.test'] },
  ];
  const ids: string[] = [];
  for (const [i, recipients] of sends.entries()) {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/emails/send',
      headers: world.asKey,
      payload: { from: 'Acme <news@acme.test>', ...recipients, subject: `Count ${i}`, textBody: 'hello' },
    });
    assert.is(res.statusCode, 202, res.body);
    ids.push(res.json().id as string);
    // One at a time: the sink's 451 falls on the third message, the one to four@.
    await drainSends();
  }
  sink.behaviour.onData = undefined;
  const statuses = await ctx.db.sequelize.query<{ id: string; status: string }>(
    `SELECT id::text, status FROM email_logs WHERE id IN (:ids) ORDER BY created_at`,
    { replacements: { ids }, type: QueryTypes.SELECT },
  );
  assert.equal(
    statuses.map((row) => row.status),
    ['SENT', 'SENT', 'QUEUED'],
  );
  let after = before;
  await waitFor('the reporter posted', async () => {
    after = await scrape();
    return after.value('svc_delivery_outcomes_total', labels('deferred'))! >= 1;
  });
  assert.is(after.value('svc_delivery_outcomes_total', labels('delivered'))! - 0, 3);
  assert.is(after.value('svc_delivery_outcomes_total', labels('deferred')), 1);
  assert.is(after.value('svc_delivery_outcomes_total', labels('bounced')), 0);
  assert.is(after.types.get('svc_delivery_outcomes_total'), 'counter');
  // A complaint a provider reports later, for the one recipient of the second send: route "report".
  const [second] = await ctx.db.sequelize.query<{ message_id: string }>(
    `SELECT message_id FROM email_logs WHERE id = :id`,
    { replacements: { id: ids[1] }, type: QueryTypes.SELECT },
  );
  const complaint = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/smtp-dsn?token=${INBOUND_TOKEN}`,
    payload: { messageId: second.message_id, type: 'complained' },
  });
  assert.equal(complaint.json(), { ok: true, processed: 1 });
  const reported = await scrape();
  assert.is(reported.value('svc_delivery_outcomes_total', { outcome: 'complained', route: 'report', provider: '' }), 1);
  assert.is(reported.value('svc_delivery_outcomes_total', labels('delivered')), 3);
  // A sync send is delivered in the API's own thread: it counts there, at once.
  const synced = await ctx.app.inject({
    method: 'POST',
    url: '/emails/send?sync=true',
    headers: world.asKey,
    payload: { from: 'Acme <news@acme.test>', to: ['five@example.test'], subject: 'Sync', textBody: 'hello' },
  });
  assert.is(synced.json().status, 'SENT', synced.body);
  const afterSync = await scrape();
  assert.is(afterSync.value('svc_delivery_outcomes_total', labels('delivered')), 4);
  // The deferred send's retry is a scheduled job of the send queue, read from the database.
  await waitFor('the depth is read again', async () => {
    const exposition = await scrape();
    return exposition.value('svc_queue_depth', { queue: 'send', state: 'scheduled' })! >= 1;
  });
  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'send'`);
});

test('queue depth and the oldest ready age are read from the database (bounded, cached a moment)', async () => {
  await ctx.db.sequelize.query(`
    INSERT INTO jobs (queue, payload, run_at)
    SELECT 'system', '{}'::jsonb, now() - interval '90 seconds' FROM generate_series(1, 3)
    UNION ALL SELECT 'system', '{}'::jsonb, now() + interval '1 hour' FROM generate_series(1, 2);
    INSERT INTO mta_spool (domain, recipients, envelope_from, message, expires_at, run_at)
    VALUES ('example.test', '[]', 'bounce@acme.test', '\\x00', now() + interval '1 day', now() - interval '40 seconds');`);
  let exposition!: Exposition;
  await waitFor('the new rows are read', async () => {
    exposition = await scrape();
    return exposition.value('svc_queue_depth', { queue: 'system', state: 'ready' }) === 3;
  });
  assert.is(exposition.value('svc_queue_depth', { queue: 'system', state: 'scheduled' }), 2);
  assert.is(exposition.value('svc_queue_depth', { queue: 'system', state: 'running' }), 0);
  assert.ok(exposition.value('svc_queue_oldest_ready_age_seconds', { queue: 'system' })! >= 90);
  assert.is(exposition.value('svc_queue_depth', { queue: 'mta_spool', state: 'ready' }), 1);
  assert.ok(exposition.value('svc_queue_oldest_ready_age_seconds', { queue: 'mta_spool' })! >= 40);
  assert.is(exposition.value('svc_queue_depth', { queue: 'webhook_deliveries', state: 'ready' }), 0);
  assert.is(exposition.value('svc_queue_oldest_ready_age_seconds', { queue: 'send' }), 0);

  await ctx.db.sequelize.query(`DELETE FROM jobs WHERE queue = 'system'; DELETE FROM mta_spool;`);
  await waitFor('the depth is read again', async () => {
    const later = await scrape();
    return later.value('svc_queue_depth', { queue: 'system', state: 'ready' }) === 0;
  });
});

test('a scrape storm costs one read of each depth statement per QUEUE_DEPTH_TTL_MS', async () => {
  const statements: string[] = [];
  const counting = {
    ...ctx.db.sql,
    rows: (statement: { name: string }, values: unknown[]) => {
      statements.push(statement.name);
      return ctx.db.sql.rows(statement as never, values);
    },
  } as typeof ctx.db.sql;
  const read = createQueueDepthReader(counting);
  const answers = await Promise.all(Array.from({ length: 50 }, () => read()));
  await read();
  assert.equal(statements.sort(), ['mta.spool-depth', 'queue.depth', 'webhook_deliveries_depth']);
  assert.ok(answers.every((answer) => answer === answers[0]));
  assert.ok(QUEUE_DEPTH_TTL_MS <= 5_000);
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test('a running daemon: /metrics only on METRICS_PORT, and the send worker thread’s counts reach it', async () => {
  const metricsPort = await freePort();
  const world = await seedSendWorld({
    SMTP_URL: `smtp://127.0.0.1:${sink.port}`,
    METRICS_PORT: String(metricsPort),
    METRICS_TOKEN: TOKEN,
  });
  const daemon = await startChildDaemon(world);
  try {
    const onApi = await fetch(`${world.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.is(onApi.status, 404);
    const listener = `http://127.0.0.1:${metricsPort}/metrics`;
    assert.is((await fetch(listener)).status, 401);
    const sent = await api(world, 'POST', '/emails/send', {
      from: 'Acme <news@acme.test>',
      to: 'thread-count@example.test',
      subject: 'Counted in its thread',
      textBody: 'hello',
    });
    assert.is(sent.status, 202, JSON.stringify(sent.body));
    await sink.waitFor((message) => message.rcptTo.includes('thread-count@example.test'));
    // Counted in the send-worker thread, posted to the API thread over the BroadcastChannel.
    await waitFor('the send thread’s count is in the API thread’s registry', async () => {
      const res = await fetch(listener, { headers: { authorization: `Bearer ${TOKEN}` } });
      const exposition = parsePrometheusText(await res.text());
      return (
        exposition.value('svc_delivery_outcomes_total', { outcome: 'delivered', route: 'relay', provider: '' }) === 1
      );
    });
  } finally {
    await stopChildDaemon(daemon);
    await world.database.drop();
  }
});

test('svc doctor warns (ok, with advice) when the event loop was held up, and passes when it was not', async () => {
  const eventLoop = createEventLoopMonitor();
  try {
    const deps = { config: ctx.config, secrets: null, sequelize: ctx.db.sequelize, redis: null, embedded: false };
    eventLoop.reset();
    await waitFor('a first sample of the event loop', () => eventLoop.recent().meanMs > 0);
    const quiet = (await runDoctor({ ...deps, eventLoop })).checks.find((check) => check.name === 'event-loop')!;
    // Quiet or not depends on the host's load too: only its shape is asserted here.
    assert.is(quiet.ok, true);
    assert.match(quiet.message, /p99 \d+ ms, max \d+ ms over the last minute or two/);

    stall(EVENT_LOOP_MAX_WARN_MS + 50);
    await waitFor('the stall to be sampled', () => eventLoop.recent().maxMs >= EVENT_LOOP_MAX_WARN_MS);
    const held = (await runDoctor({ ...deps, eventLoop })).checks.find((check) => check.name === 'event-loop')!;
    assert.is(held.ok, true);
    assert.match(
      held.message,
      /^Warning: the event loop of the answering daemon was held up \(p99 \d+ ms, max (\d+) ms/,
    );
    assert.ok(Number(/max (\d+) ms/.exec(held.message)![1]) >= EVENT_LOOP_MAX_WARN_MS, held.message);
    assert.match(held.fix!, /svc_event_loop_delay_seconds/);

    const local = (await runDoctor(deps)).checks.find((check) => check.name === 'event-loop')!;
    assert.is(local.ok, true);
    assert.match(local.message, /run svc doctor without --local/);
  } finally {
    eventLoop.close();
  }
});

test('svc doctor warns when /metrics is public: no token, on the API, on a public address or behind a proxy', () => {
  const config = (env: Record<string, string>) => loadConfig({ DATA_DIR: ctx.dataDir, ...env });
  const exposed = checkMetricsExposure({ config: config({ HOST: '0.0.0.0' }) });
  assert.is(exposed.ok, true);
  assert.match(exposed.message, /^Warning: \/metrics is public/);
  assert.match(exposed.fix!, /METRICS_TOKEN.*METRICS_PORT/);
  assert.match(checkMetricsExposure({ config: config({ TRUST_PROXY: 'true' }) }).message, /^Warning: .*behind a proxy/);
  const guarded: Array<Record<string, string>> = [
    {},
    { HOST: '0.0.0.0', METRICS_TOKEN: TOKEN },
    { HOST: '0.0.0.0', METRICS_PORT: '9464' },
  ];
  for (const env of guarded) {
    const check = checkMetricsExposure({ config: config(env) });
    assert.is(check.ok, true);
    assert.not.match(check.message, /Warning/);
    assert.is(check.fix, undefined);
  }
  // Settings that would do nothing, or too little, are refused at boot.
  assert.throws(() => config({ METRICS_HOST: '10.0.0.5' }), /METRICS_HOST.*only applies with METRICS_PORT/);
  assert.throws(() => config({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN.*16 characters/);
  assert.throws(() => config({ PORT: '9464', METRICS_PORT: '9464' }), /METRICS_PORT.*must differ from PORT/);
  assert.is(config({ METRICS_PORT: '9464' }).metricsHost, '127.0.0.1');
});

test.run();
