// The outbound queue's routes on a real database, without the MTA loop (ROLE=api): GET /platform/queue
// with counts, next try and the latest response per destination; retry, hold (pre-emptive too) and
// release; the claim skipping held destinations; who may (platform admins only); bad domains; the
// `outbound` part of /health/queues. Delivery through a daemon is test/mta-queue.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createWorld, type AdminFixture } from './helpers/fixtures.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { claimSpool, type SpoolClaimRooms } from '../daemon/mta/sql/spool.ts';
import { loadReactionRules, recordReactionStatement } from '../daemon/mta/sql/reactions.ts';
import { reactionLines } from '../cli/services/outbound-queue.ts';

let ctx: TestContext;
/** A claim as a worker with no lanes yet makes it: any destination up to 100 rows. */
const NO_LANES: SpoolClaimRooms = { full: [], rooms: [], otherRoom: 100 };
let world: Awaited<ReturnType<typeof createWorld>>;
let platform: AdminFixture;
let asPlatform: { authorization: string };

test.before(async () => {
  ctx = await createTestContext({ env: { QUEUE_STUCK_AFTER_MS: '2000', DELIVERY: 'direct' } });
  world = await createWorld(ctx.app);
  platform = await createAdmin(ctx.app, { platformAdmin: true });
  asPlatform = { authorization: `Bearer ${platform.token}` };
});
test.after(async () => {
  await ctx?.close();
});

/** A spool row as the transport target and the loop leave it (system mail: no tenant, no log). */
async function spool(
  domain: string,
  row: {
    state?: 'queued' | 'deferred' | 'leased';
    runAtSecondsFromNow?: number;
    lastResponse?: string;
    lastAttemptSecondsAgo?: number;
    createdSecondsAgo?: number;
  } = {},
): Promise<string> {
  const [inserted] = await ctx.db.sequelize.query<{ id: string }>(
    `INSERT INTO mta_spool (domain, recipients, envelope_from, message, state, attempts, run_at, expires_at,
                            last_response, last_attempt_at, lease_owner, lease_until, created_at)
     VALUES (:domain, '[{"address":"a@x","state":"pending","response":null}]', 'b@acme.test', '\\x00', :state,
             :attempts, now() + :runAt * interval '1 second', now() + interval '5 days', :lastResponse,
             now() - :lastAttempt * interval '1 second', :owner, :leaseUntil, now() - :created * interval '1 second')
     RETURNING id::text AS id`,
    {
      type: QueryTypes.SELECT,
      replacements: {
        domain,
        state: row.state ?? 'queued',
        attempts: row.state === 'deferred' ? 1 : 0,
        runAt: row.runAtSecondsFromNow ?? 0,
        lastResponse: row.lastResponse ?? null,
        lastAttempt: row.lastAttemptSecondsAgo ?? null,
        owner: row.state === 'leased' ? 'elsewhere' : null,
        leaseUntil: row.state === 'leased' ? new Date(Date.now() + 60_000) : null,
        created: row.createdSecondsAgo ?? 0,
      },
    },
  );
  return inserted.id;
}

async function clearSpool(): Promise<void> {
  await ctx.db.sequelize.query('DELETE FROM mta_spool; DELETE FROM mta_destinations;');
}

const get = (url: string, headers: Record<string, string> = asPlatform) =>
  ctx.app.inject({ method: 'GET', url, headers });
const post = (url: string, payload?: object, headers: Record<string, string> = asPlatform) =>
  ctx.app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });

test('GET /platform/queue: per destination queued, deferred, in flight, oldest, next try, the latest response', async () => {
  await clearSpool();
  await spool('x.test', { createdSecondsAgo: 30 });
  await spool('x.test', {
    state: 'deferred',
    runAtSecondsFromNow: 600,
    lastResponse: '451 4.7.1 older greylisting',
    lastAttemptSecondsAgo: 120,
    createdSecondsAgo: 300,
  });
  await spool('x.test', {
    state: 'deferred',
    runAtSecondsFromNow: 60,
    lastResponse: '421 4.3.2 latest: too busy',
    lastAttemptSecondsAgo: 5,
  });
  await spool('x.test', { state: 'leased' });
  await spool('y.test', { createdSecondsAgo: 10 });
  const res = await get('/platform/queue');
  assert.is(res.statusCode, 200, res.body);
  const body = res.json();
  assert.is(body.delivery, 'direct');
  assert.equal(body.meta, { page: 1, limit: 100, total: 2, totalPages: 1 });
  assert.equal(
    body.data.map((d: { domain: string }) => d.domain),
    ['x.test', 'y.test'],
    'oldest mail first',
  );
  const x = body.data[0];
  assert.equal([x.queued, x.deferred, x.inFlight, x.held, x.stuck], [1, 2, 1, false, false]);
  assert.is(x.lastResponse, '421 4.3.2 latest: too busy');
  const nextTry = new Date(x.nextTryAt).getTime() - Date.now();
  assert.ok(nextTry > 30_000 && nextTry <= 60_000, `next try in ${nextTry} ms: the earliest deferred row`);
  assert.ok(Date.now() - new Date(x.oldestAt).getTime() >= 299_000, x.oldestAt);
  assert.ok(Date.now() - new Date(x.lastAttemptAt).getTime() < 60_000, x.lastAttemptAt);
  assert.equal([x.heldAt, x.heldBy, x.holdReason], [null, null, null]);

  const one = await get('/platform/queue?domain=Y.TEST.');
  assert.equal(
    one.json().data.map((d: { domain: string; queued: number }) => [d.domain, d.queued]),
    [['y.test', 1]],
  );
  assert.equal((await get('/platform/queue?domain=nothing.test')).json().data, [], 'a filter that matches nothing');
  const paged = (await get('/platform/queue?limit=1&page=2')).json();
  assert.equal([paged.data[0].domain, paged.meta.total, paged.meta.totalPages], ['y.test', 2, 2]);
});

test('a due row waiting past QUEUE_STUCK_AFTER_MS is stuck, unless its destination is held', async () => {
  await clearSpool();
  await spool('slow.test', { runAtSecondsFromNow: -10 });
  const listed = (await get('/platform/queue')).json().data[0];
  assert.is(listed.stuck, true);
  assert.ok(listed.oldestWaitingAgeMs >= 9_000, String(listed.oldestWaitingAgeMs));
  const held = (await post('/platform/queue/slow.test/hold', {})).json();
  assert.equal([held.held, held.stuck], [true, false]);
});

test('hold: the claim skips the held domain; a domain with nothing queued may be held; release makes it due', async () => {
  await clearSpool();
  await spool('held.test', { state: 'deferred', runAtSecondsFromNow: 3600, lastResponse: '451 later' });
  await spool('held.test', {});
  await spool('free.test', {});
  const hold = await post('/platform/queue/HELD.test/hold', { reason: 'they blocklisted us' });
  assert.is(hold.statusCode, 200, hold.body);
  const view = hold.json();
  assert.equal(
    [view.domain, view.held, view.holdReason, view.heldBy, view.queued, view.deferred],
    ['held.test', true, 'they blocklisted us', { id: platform.id, email: platform.email }, 1, 1],
  );
  const claimed = await claimSpool(ctx.db.sql, 'test-worker', 60_000, NO_LANES, 100);
  assert.equal(
    claimed.map((row) => row.domain),
    ['free.test'],
    'only the destination that is not held',
  );

  const again = (await post('/platform/queue/held.test/hold', { reason: 'still' })).json();
  assert.is(again.heldAt, view.heldAt, 'holding again keeps when the hold began');
  assert.is(again.holdReason, 'still');

  // Pre-emptive: nothing spooled for it yet; a hold without a body has no reason.
  const early = await post('/platform/queue/later.test/hold');
  assert.is(early.statusCode, 200, early.body);
  assert.equal([early.json().held, early.json().queued, early.json().holdReason], [true, 0, null]);
  const listed = (await get('/platform/queue')).json().data.map((d: { domain: string }) => d.domain);
  assert.ok(listed.includes('later.test'), 'a held domain is listed with nothing spooled');

  const released = await post('/platform/queue/held.test/release');
  assert.is(released.statusCode, 200, released.body);
  assert.equal([released.json().held, released.json().heldBy], [false, null]);
  const due = await ctx.db.sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM mta_spool WHERE domain = 'held.test' AND run_at <= now()`,
    { type: QueryTypes.SELECT },
  );
  assert.is(due[0].n, 2, 'release makes every message of the domain due');
  const reclaimed = await claimSpool(ctx.db.sql, 'test-worker', 60_000, NO_LANES, 100);
  assert.is(reclaimed.filter((row) => row.domain === 'held.test').length, 2);
  assertErrorBody(await post('/platform/queue/held.test/release'), 409, 'NOT_HELD');

  const audit = await ctx.db.sequelize.query<{ action: string; target: string }>(
    `SELECT action, target FROM audit_events WHERE action LIKE 'platform.queue_%' ORDER BY created_at, action`,
    { type: QueryTypes.SELECT },
  );
  assert.ok(
    audit.some((row) => row.action === 'platform.queue_held' && row.target === 'held.test'),
    JSON.stringify(audit),
  );
  assert.ok(audit.some((row) => row.action === 'platform.queue_released' && row.target === 'held.test'));
});

test("the claim takes no destination past its lane's room, and none of a full lane; an expired lease counts as due", async () => {
  await clearSpool();
  for (let i = 0; i < 5; i++) await spool('room.test', { runAtSecondsFromNow: -10 + i });
  for (let i = 0; i < 4; i++) await spool('other.test', { runAtSecondsFromNow: -10 + i });
  for (let i = 0; i < 3; i++) await spool('full.test', {});
  const lost = await spool('lost.test', { state: 'leased' });
  await ctx.db.sequelize.query(`UPDATE mta_spool SET lease_until = now() - interval '1 second' WHERE id = :lost`, {
    replacements: { lost },
  });
  const claimed = await claimSpool(
    ctx.db.sql,
    'test-worker',
    60_000,
    { full: ['full.test'], rooms: [['room.test', 2]], otherRoom: 3 },
    100,
  );
  const byDomain: Record<string, number> = {};
  for (const row of claimed) byDomain[row.domain] = (byDomain[row.domain] ?? 0) + 1;
  assert.equal(byDomain, { 'room.test': 2, 'other.test': 3, 'lost.test': 1 });
  const [left] = await ctx.db.sequelize.query<{ queued: number; mine: number }>(
    `SELECT count(*) FILTER (WHERE state = 'queued')::int AS queued,
            count(*) FILTER (WHERE lease_owner = 'test-worker')::int AS mine FROM mta_spool`,
    { type: QueryTypes.SELECT },
  );
  assert.equal(left, { queued: 3 + 1 + 3, mine: 6 }, 'what the cut left stays queued for another node');
  // The oldest of each destination first.
  const [oldest] = await ctx.db.sequelize.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM mta_spool WHERE domain = 'room.test' AND lease_owner = 'test-worker' AND run_at < now() - interval '8 seconds'`,
    { type: QueryTypes.SELECT },
  );
  assert.is(oldest.n, 2);
});

test('retry: deferred messages are due now; 404 for a domain with nothing spooled', async () => {
  await clearSpool();
  await spool('late.test', { state: 'deferred', runAtSecondsFromNow: 3600, lastResponse: '451 4.7.1 later' });
  await spool('late.test', { state: 'deferred', runAtSecondsFromNow: 60, lastResponse: '451 4.7.1 later' });
  const res = await post('/platform/queue/late.test/retry');
  assert.is(res.statusCode, 200, res.body);
  assert.is(res.json().madeDue, 2);
  assert.is(res.json().destination.deferred, 2);
  assert.ok(new Date(res.json().destination.nextTryAt).getTime() <= Date.now());
  const claimed = await claimSpool(ctx.db.sql, 'test-worker', 60_000, NO_LANES, 100);
  assert.is(claimed.length, 2);
  assertErrorBody(await post('/platform/queue/nothing.test/retry'), 404, 'NOT_FOUND');
});

test('platform admins only: 401 without a token, 403 for a tenant owner and an API key', async () => {
  assertErrorBody(await ctx.app.inject({ method: 'GET', url: '/platform/queue' }), 401);
  for (const headers of [{ authorization: world.asOwner.authorization }, world.asKey]) {
    assertErrorBody(await get('/platform/queue', headers), 403);
    assertErrorBody(await post('/platform/queue/x.test/hold', {}, headers), 403);
    assertErrorBody(await post('/platform/queue/x.test/retry', undefined, headers), 403);
    assertErrorBody(await post('/platform/queue/x.test/release', undefined, headers), 403);
  }
  const rows = await ctx.db.sequelize.query(`SELECT 1 FROM mta_destinations WHERE domain = 'x.test'`, {
    type: QueryTypes.SELECT,
  });
  assert.is(rows.length, 0, 'a refused hold wrote nothing');
});

test('a bad domain is a 400 naming the domain field', async () => {
  for (const bad of ['not a domain', '1.2.3.4', 'localhost', 'a@b.test']) {
    const body = assertErrorBody(await post(`/platform/queue/${encodeURIComponent(bad)}/hold`, {}), 400);
    assert.is(body.details?.[0].field, 'domain', JSON.stringify(body));
  }
  assertErrorBody(await get(`/platform/queue?domain=${encodeURIComponent('x y')}`), 400);
  assertErrorBody(await post('/platform/queue/x.test/hold', { reason: 'x', extra: true }), 400);
});

test('/health/queues: outbound totals for every caller, destinations for platform admins, stuck counts in ok', async () => {
  await clearSpool();
  await spool('slow.test', { runAtSecondsFromNow: -30, createdSecondsAgo: 60 });
  await spool('slow.test', { state: 'deferred', runAtSecondsFromNow: 600, lastResponse: '451 later' });
  await spool('held.test', { runAtSecondsFromNow: -300 });
  await post('/platform/queue/held.test/hold', {});
  const asKey = await get('/health/queues', world.asKey);
  assert.is(asKey.statusCode, 200, asKey.body);
  const outbound = asKey.json().outbound;
  assert.equal(
    [outbound.delivery, outbound.queued, outbound.deferred, outbound.inFlight, outbound.heldDestinations],
    ['direct', 2, 1, 0, 1],
  );
  assert.ok(
    outbound.oldestWaitingAgeMs >= 29_000 && outbound.oldestWaitingAgeMs < 200_000,
    `the held destination's older row does not count: ${outbound.oldestWaitingAgeMs}`,
  );
  assert.is(outbound.stuck, true);
  assert.is(asKey.json().ok, false);
  assert.is(outbound.destinations, undefined, 'a tenant key does not see which domains others send to');

  const admin = (await get('/health/queues')).json().outbound;
  const byDomain = Object.fromEntries(admin.destinations.map((d: { domain: string }) => [d.domain, d]));
  assert.equal(
    [byDomain['slow.test'].queued, byDomain['slow.test'].deferred, byDomain['slow.test'].stuck],
    [1, 1, true],
  );
  assert.ok(byDomain['slow.test'].oldestAgeMs >= 59_000, String(byDomain['slow.test'].oldestAgeMs));
  assert.equal([byDomain['held.test'].held, byDomain['held.test'].stuck], [true, false]);

  await clearSpool();
  const idle = (await get('/health/queues', world.asKey)).json();
  assert.equal(idle.outbound, {
    delivery: 'direct',
    queued: 0,
    deferred: 0,
    inFlight: 0,
    heldDestinations: 0,
    oldestWaitingAgeMs: 0,
    stuck: false,
    // No MTA thread ran here: no node has reported its resolver.
    resolverUnhealthy: [],
  });
  assert.is(idle.ok, true);
});

test("a reaction to a provider's reply is a line of the queue view (API and svc queue)", async () => {
  const before = await ctx.app.inject({ method: 'GET', url: '/platform/queue', headers: asPlatform });
  assert.equal(before.json().reactions, [], 'nothing in force yet');
  // Recorded as the MTA loop records it when Gmail answers 421 4.7.28 (the seeded rule).
  const rules = await loadReactionRules(ctx.db.sql);
  const gmail = rules.find((rule) => rule.providerKey === 'google' && rule.enhancedCode === '4.7.28')!;
  assert.ok(gmail, 'the seeded Gmail rule');
  const statement = recordReactionStatement({
    rule: gmail,
    providerKey: 'google',
    domain: null,
    reply: '421 4.7.28 Our system has detected an unusual rate of unsolicited mail',
    tenantId: null,
    emailId: null,
  });
  await ctx.db.sequelize.query(statement.text, { bind: statement.values });
  const res = await ctx.app.inject({ method: 'GET', url: '/platform/queue', headers: asPlatform });
  assert.is(res.statusCode, 200, res.body);
  const [reaction] = res.json().reactions;
  assert.is(reaction.providerKey, 'google');
  assert.is(reaction.kind, 'suspend');
  assert.is(reaction.domain, null);
  const minutes = (new Date(reaction.until).getTime() - Date.now()) / 60_000;
  assert.ok(minutes > 14 && minutes <= 15, `suspended for the rule's 15 minutes: ${minutes}`);
  assert.match(reaction.reason, /4\.7\.28/);
  const [line] = reactionLines(res.json());
  assert.match(line, /^reaction: google \(all its destinations\) suspended until .+ — .*4\.7\.28/);
});

test.run();
