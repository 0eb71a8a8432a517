// GET /metrics and the doctor's event-loop check: a stall made on purpose is seen by both, and
// each scrape starts a new interval (the next one no longer carries it).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createEventLoopMonitor } from '../daemon/modules/metrics/event-loop.ts';
import { EVENT_LOOP_MAX_WARN_MS, runDoctor } from '../daemon/modules/doctor/service.ts';

let ctx: TestContext;
test.before(async () => {
  ctx = await createTestContext();
});
test.after(async () => {
  await ctx?.close();
});

function gauges(text: string): Record<string, number> {
  return Object.fromEntries(
    text
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => [line.split(' ')[0], Number(line.split(' ')[1])]),
  );
}

/** Holds the event loop for `ms`, as a synchronous parse of a stranger's attachment would. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Lets the monitor's timer fire (and record the stall) before the next read. */
const nextTicks = () => new Promise((resolve) => setTimeout(resolve, 30));

test('GET /metrics: Prometheus text with the event-loop delay since the previous scrape and the RSS', async () => {
  await ctx.app.inject({ method: 'GET', url: '/metrics' });
  // After a reset the histogram needs one tick of its timer before it measures again.
  await nextTicks();
  stall(300);
  await nextTicks();
  const res = await ctx.app.inject({ method: 'GET', url: '/metrics' });
  assert.is(res.statusCode, 200, res.body);
  assert.match(res.headers['content-type'] as string, /^text\/plain; version=0\.0\.4/);
  assert.match(res.body, /# TYPE svc_event_loop_delay_p99_seconds gauge\n/);
  const first = gauges(res.body);
  assert.ok(first.svc_event_loop_delay_max_seconds >= 0.25, res.body);
  assert.ok(first.svc_event_loop_delay_p99_seconds > 0, res.body);
  assert.ok(first.process_resident_memory_bytes > 10 * 1024 ** 2, res.body);
  await nextTicks();
  const second = gauges((await ctx.app.inject({ method: 'GET', url: '/metrics' })).body);
  assert.ok(second.svc_event_loop_delay_max_seconds < 0.25, `the stall was counted twice: ${JSON.stringify(second)}`);
});

test('svc doctor warns (ok, with advice) when the event loop was held up, and passes when it was not', async () => {
  const eventLoop = createEventLoopMonitor();
  try {
    const deps = { config: ctx.config, secrets: null, sequelize: ctx.db.sequelize, redis: null, embedded: false };
    eventLoop.reset();
    await nextTicks();
    const quiet = (await runDoctor({ ...deps, eventLoop })).checks.find((check) => check.name === 'event-loop')!;
    // Quiet or not depends on the host's load too: only its shape is asserted here.
    assert.is(quiet.ok, true);
    assert.match(quiet.message, /p99 \d+ ms, max \d+ ms over the last minute or two/);

    stall(EVENT_LOOP_MAX_WARN_MS + 50);
    await nextTicks();
    const held = (await runDoctor({ ...deps, eventLoop })).checks.find((check) => check.name === 'event-loop')!;
    assert.is(held.ok, true);
    assert.match(
      held.message,
      /^Warning: the event loop of the answering daemon was held up \(p99 \d+ ms, max (\d+) ms/,
    );
    assert.ok(Number(/max (\d+) ms/.exec(held.message)![1]) >= EVENT_LOOP_MAX_WARN_MS, held.message);
    assert.match(held.fix!, /svc_event_loop_delay_/);

    const local = (await runDoctor(deps)).checks.find((check) => check.name === 'event-loop')!;
    assert.is(local.ok, true);
    assert.match(local.message, /run svc doctor without --local/);
  } finally {
    eventLoop.close();
  }
});

test.run();
