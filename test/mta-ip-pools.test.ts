// IP pools and warm-up end to end (issue 29): a running daemon with DELIVERY=direct, a pool of two
// source addresses on loopback (127.0.0.130/.131) assigned to the tenant, an MX host named like
// Google's (so the provider is 'google') on 127.0.0.120 recording the peer address and the EHLO name
// of every connection. Day 1's ceiling reached: further rows wait (in the spool, no attempt counted)
// until a warm address joins the pool, which carries them. The test clock: an address's warm-up
// start moved 29 days back (day 30) lifts its ceiling. A project assignment beats the tenant's. Google
// deferring most of a day's mail holds the address back a step, and the rows wait saying so.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MxHost, MxHostScript, ReceivedMessage } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, countRows, openWorldDatabase, type SendWorld } from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';
import type { IpPool } from '../shared/schemas/ip-pools.ts';

const MX_ADDRESS = '127.0.0.120';
const SOURCES = { a: '127.0.0.130', b: '127.0.0.131', warm: '127.0.0.132', project: '127.0.0.133' };
const EHLO = {
  [SOURCES.a]: 'out-a.pool.test',
  [SOURCES.b]: 'out-b.pool.test',
  [SOURCES.warm]: 'out-warm.pool.test',
  [SOURCES.project]: 'out-project.pool.test',
};
/** Day 1: 3 messages to Google per address; day 30: 1000. */
const GOOGLE_CEILINGS = [3, ...Array<number>(28).fill(10), 1000];

let mta: MtaFixture;
let mx: MxHost;
/** The MX host's behaviour, changed by the last test (Google deferring a new address). */
const mxScript: MxHostScript = {};
let world: SendWorld;
let adminToken: string;
let pool: IpPool;
let projectId: string;

test.before(async () => {
  mta = await MtaFixture.start();
  mx = await mta.mxHost(mxScript, MX_ADDRESS);
  mta.route('gmail.test', 'gmail-smtp-in.l.google.com', MX_ADDRESS);
  world = await mta.seed({ EHLO_NAME: 'node.acme.test', SEND_RETRY_BASE_MS: '300' });
  adminToken = await mta.adminToken();
  projectId = await mta.withDatabase(async (db) => {
    const [project] = await db.sequelize.query<{ id: string }>(
      `INSERT INTO projects (tenant_id, name) VALUES (:tenantId, 'newsletters') RETURNING id::text`,
      { replacements: { tenantId: world.tenantId }, type: 'SELECT' as never },
    );
    return project.id;
  });
  await mta.startDaemon();
});

test.after(async () => {
  await mta?.close();
});

/** A platform admin's call on the daemon. */
function admin(method: string, path: string, body?: unknown): ReturnType<typeof api> {
  return api(world, method, path, body, adminToken);
}

const send = (to: string, extra: Record<string, unknown> = {}) =>
  mta.send(to, { subject: `pooled to ${to}`, ...extra });

const peerOf = (message: ReceivedMessage) => message.remoteAddress.replace(/^::ffff:/, '');
const arrivedFor = (address: string) => mx.messages.filter((message) => message.to.includes(address));
const googleOf = (address: IpPool['addresses'][number]) =>
  address.warmup.providers.find((p) => p.provider === 'google')!;

test('the pool is created, scheduled and assigned through /platform/ip-pools', async () => {
  const providers = { google: GOOGLE_CEILINGS, default: Array<number>(30).fill(100) };
  const created = await admin('POST', '/platform/ip-pools', {
    name: 'shared-1',
    addresses: [
      { ip: SOURCES.a, ehloName: EHLO[SOURCES.a] },
      { ip: SOURCES.b, ehloName: EHLO[SOURCES.b] },
    ],
    schedule: { days: 30, providers },
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  pool = created.body;
  const assigned = await admin('POST', `/platform/ip-pools/${pool.id}/assignments`, { tenantId: world.tenantId });
  assert.is(assigned.status, 201, JSON.stringify(assigned.body));
  assert.equal(
    assigned.body.assignments.map((a: any) => [a.tenantId, a.projectId, a.stream]),
    [[world.tenantId, null, null]],
  );
  for (const address of assigned.body.addresses as IpPool['addresses']) {
    assert.is(address.warmup.state, 'warming');
    assert.is(address.warmup.day, 1);
    assert.equal(googleOf(address), { provider: 'google', sent: 0, refused: 0, heldDays: 0, step: 1, ceiling: 3 });
  }
  const refused = await admin('PUT', `/platform/ip-pools/${pool.id}/schedule`, {
    days: 30,
    providers: { google: [1] },
  });
  assert.is(refused.status, 400, 'a schedule without a default list, or of the wrong length, is refused');
});

test('each connection binds a pool address and says its EHLO name; weights alternate the two', async () => {
  const ids = await Promise.all([1, 2, 3, 4].map((n) => send(`first${n}@gmail.test`)));
  await waitFor('four messages at the MX', () => mx.messages.length >= 4, { timeoutMs: 30_000 });
  const peers = mx.messages.map(peerOf);
  assert.equal([...new Set(peers)].sort(), [SOURCES.a, SOURCES.b], `peers: ${peers.join(', ')}`);
  for (const message of mx.messages) assert.is(message.helo, EHLO[peerOf(message)], 'the EHLO name of that address');
  assert.is(peers.filter((peer) => peer === SOURCES.a).length, 2, 'weight 1 each: two messages each');
  await waitFor(
    'the logs to say DELIVERED',
    async () => {
      const logs = await Promise.all(ids.map((id) => api(world, 'GET', `/emails/logs/${id}`)));
      return logs.every((log) => log.body.status === 'DELIVERED');
    },
    { timeoutMs: 15_000 },
  );
  await waitFor(
    "today's counts: 2 to Google from each address",
    async () => {
      const listed = (await admin('GET', `/platform/ip-pools/${pool.id}`)).body as IpPool;
      return listed.addresses.every((address) => googleOf(address).sent === 2);
    },
    { timeoutMs: 10_000 },
  );
});

test("day 1's ceiling reached: further rows wait in the spool, no attempt counted, reason in the timeline", async () => {
  const ids = await Promise.all([1, 2, 3, 4].map((n) => send(`second${n}@gmail.test`)));
  // 3 per address on day 1: two of these four go out, two wait.
  await waitFor('six messages at the MX', () => mx.messages.length >= 6, { timeoutMs: 30_000 });
  const db = await openWorldDatabase(world);
  try {
    await waitFor(
      'two rows waiting on the pool',
      async () =>
        (await countRows(db, `SELECT count(*) FROM mta_spool WHERE warmup_wait_pool = :pool AND state = 'queued'`, {
          pool: pool.id,
        })) === 2,
      { timeoutMs: 15_000 },
    );
    assert.is(
      await countRows(
        db,
        `SELECT count(*) FROM mta_spool WHERE warmup_wait_pool = :pool AND attempts = 0
            AND run_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' + interval '1 day'
            AND last_response LIKE '451 4.7.0 warm-up:%google%'`,
        { pool: pool.id },
      ),
      2,
      'due at the next UTC day, without an attempt counted',
    );
    // The counts are committed with the outcomes, after the MX host has the messages: wait for them.
    const atCeiling = () =>
      countRows(
        db,
        `SELECT count(*) FROM ip_warmup_counts WHERE provider = 'google' AND sent = 3 AND day = (now() AT TIME ZONE 'UTC')::date`,
      );
    await waitFor('both addresses at their ceiling of 3', async () => (await atCeiling()) === 2, { timeoutMs: 15_000 });
    assert.is(await atCeiling(), 2, 'each address sent exactly its ceiling');
  } finally {
    await db.close();
  }
  assert.is(mx.messages.length, 6, 'nothing beyond the ceilings reached the MX');
  // The two that went out are recorded in their own batch, after their DATA was answered: the waiting
  // rows' batch (no network) may commit first.
  let waiting: any[] = [];
  await waitFor(
    'two of the four DELIVERED',
    async () => {
      const logs = await Promise.all(ids.map(async (id) => (await api(world, 'GET', `/emails/logs/${id}`)).body));
      waiting = logs.filter((log) => log.status !== 'DELIVERED');
      return waiting.length === 2;
    },
    { timeoutMs: 15_000 },
  );
  // A wait of ours (issue 49 §4): its own state and reason, when it goes; no deferral, nothing sent.
  for (const log of waiting) {
    assert.is(log.status, 'QUEUED', 'nothing was sent: not SENDING');
    assert.not.ok(
      log.events.some((event: any) => event.type === 'deferred'),
      JSON.stringify(log.events),
    );
    const wait = log.events.find((event: any) => event.type === 'waiting');
    assert.is(wait?.data.kind, 'warmup');
    assert.match(wait?.data.reason ?? '', /warm-up: every address of the pool is at today's ceiling for google/);
    assert.equal(log.waiting, { kind: 'warmup', reason: wait.data.reason, until: wait.data.until });
    assert.ok(Date.parse(log.waiting.until) > Date.now(), 'goes at the next UTC day');
  }
  // The queue view lists them as waiting, with the reason and when they go; not queued, not deferred.
  const queue = (await admin('GET', '/platform/queue?domain=gmail.test')).body;
  const gmail = queue.data[0];
  assert.equal([gmail.waiting, gmail.queued, gmail.deferred], [2, 0, 0], JSON.stringify(gmail));
  assert.match(gmail.waitReason, /warm-up/);
  assert.is(gmail.waitUntil, waiting.map((log) => log.waiting.until).sort()[0]);
  // And the deliverability stats count no provider deferral: google saw only the six it delivered.
  const stats = await api(world, 'GET', '/stats/deliverability');
  assert.is(stats.status, 200, JSON.stringify(stats.body));
  const google = stats.body.totals.find((p: { provider: string }) => p.provider === 'google');
  assert.ok(google?.delivered > 0, JSON.stringify(stats.body));
  assert.is(google.deferred, 0, JSON.stringify(stats.body));
});

test('a warm address joins the pool: the waiting rows leave from it at once', async () => {
  const added = await admin('POST', `/platform/ip-pools/${pool.id}/addresses`, {
    ip: SOURCES.warm,
    ehloName: EHLO[SOURCES.warm],
    warmup: false,
  });
  assert.is(added.status, 201, JSON.stringify(added.body));
  const warm = (added.body as IpPool).addresses.find((address) => address.ip === SOURCES.warm)!;
  assert.is(warm.warmup.state, 'warm');
  assert.is(googleOf(warm).ceiling, null);
  await waitFor('the two waiting messages at the MX', () => mx.messages.length >= 8, { timeoutMs: 30_000 }).catch(
    async (e) => {
      const db = await openWorldDatabase(world);
      console.log(
        await db.sequelize.query(`SELECT state, attempts, run_at, last_response, warmup_wait_pool FROM mta_spool`),
      );
      await db.close();
      console.log(mta.daemon?.output().slice(-3000));
      throw e;
    },
  );
  const late = mx.messages.slice(6);
  assert.equal(late.map(peerOf), [SOURCES.warm, SOURCES.warm]);
  assert.equal(
    late.map((message) => message.helo),
    [EHLO[SOURCES.warm], EHLO[SOURCES.warm]],
  );
  assert.ok(late.every((message) => /^second\d@gmail\.test$/.test(message.to[0])));
});

test('test clock: day 30 lifts the ceiling of an address; one still at its day-1 ceiling takes nothing', async () => {
  const current = (await admin('GET', `/platform/ip-pools/${pool.id}`)).body as IpPool;
  const a = current.addresses.find((address) => address.ip === SOURCES.a)!;
  const started = new Date(Date.now() - 29 * 86_400_000).toISOString();
  const moved = await admin('PATCH', `/platform/ip-pools/${pool.id}/addresses/${a.id}`, { warmupStartedAt: started });
  assert.is(moved.status, 200, JSON.stringify(moved.body));
  const movedA = (moved.body as IpPool).addresses.find((address) => address.ip === SOURCES.a)!;
  assert.is(movedA.warmup.day, 30);
  assert.equal(googleOf(movedA), { provider: 'google', sent: 3, refused: 0, heldDays: 0, step: 30, ceiling: 1000 });
  const before = mx.messages.length;
  await Promise.all([1, 2, 3, 4, 5, 6].map((n) => send(`third${n}@gmail.test`)));
  await waitFor('six more messages at the MX', () => mx.messages.length >= before + 6, { timeoutMs: 30_000 });
  const peers = mx.messages.slice(before).map(peerOf);
  assert.not.ok(peers.includes(SOURCES.b), `b is at its day-1 ceiling: ${peers.join(', ')}`);
  assert.ok(peers.filter((peer) => peer === SOURCES.a).length >= 2, `a is past its day-1 ceiling: ${peers.join(', ')}`);
  await waitFor(
    "a's count passes its day-1 ceiling of 3",
    async () => {
      const listed = (await admin('GET', `/platform/ip-pools/${pool.id}`)).body as IpPool;
      const counted = googleOf(listed.addresses.find((address) => address.ip === SOURCES.a)!).sent;
      return counted === 3 + peers.filter((peer) => peer === SOURCES.a).length;
    },
    { timeoutMs: 10_000 },
  );
  // Removing the warm address applies at once (NOTIFY), and the next messages leave from a alone.
  const removed = await admin(
    'DELETE',
    `/platform/ip-pools/${pool.id}/addresses/${current.addresses.find((address) => address.ip === SOURCES.warm)!.id}`,
  );
  assert.is(removed.status, 200);
});

test("a project's assignment beats the tenant's; transactional mail of other projects keeps the tenant's pool", async () => {
  const second = await admin('POST', '/platform/ip-pools', {
    name: 'newsletters',
    addresses: [{ ip: SOURCES.project, ehloName: EHLO[SOURCES.project], warmup: false }],
  });
  assert.is(second.status, 201, JSON.stringify(second.body));
  assert.is((second.body as IpPool).defaultSchedule, true);
  const assigned = await admin('POST', `/platform/ip-pools/${second.body.id}/assignments`, {
    tenantId: world.tenantId,
    projectId,
  });
  assert.is(assigned.status, 201, JSON.stringify(assigned.body));
  const before = mx.messages.length;
  await send('project@gmail.test', { projectId });
  await send('plain@gmail.test');
  await waitFor('both at the MX', () => mx.messages.length >= before + 2, { timeoutMs: 30_000 });
  assert.is(peerOf(arrivedFor('project@gmail.test')[0]), SOURCES.project);
  assert.is(arrivedFor('project@gmail.test')[0].helo, EHLO[SOURCES.project]);
  assert.is(peerOf(arrivedFor('plain@gmail.test')[0]), SOURCES.a, 'b is full, the warm address was removed');
  const busy = await admin('DELETE', `/platform/ip-pools/${second.body.id}`);
  assert.is(busy.status, 409, 'an assigned pool is not deleted');
});

test("Google defers a's mail (451): refusals are counted, today holds a's ramp, and its rows wait saying so", async () => {
  const sentBefore = googleOf(
    ((await admin('GET', `/platform/ip-pools/${pool.id}`)).body as IpPool).addresses.find((a) => a.ip === SOURCES.a)!,
  ).sent;
  mxScript.rcpt = (address) => (address.startsWith('deferred') ? '451 4.3.0 greylisted, come back in a while' : null);
  try {
    // (A reply no shaping reaction matches: Gmail's 4.7.28 would suspend the provider first, docs/mta.md.)
    // a is the only address with room (b is at its day-1 ceiling, the warm one is gone): 14 refused
    // recipients, retried every few hundred ms, take a past 20 recipients today with far more than 10 %
    // refused. Held today, a is back on step 29 (a ceiling of 10), which it has passed: the rows wait.
    await Promise.all(Array.from({ length: 14 }, (_, n) => send(`deferred${n}@gmail.test`)));
    let refusedAttempts = 0;
    const db = await openWorldDatabase(world);
    try {
      await waitFor(
        'rows waiting on the pool, held back a step',
        async () =>
          (await countRows(
            db,
            `SELECT count(*) FROM mta_spool WHERE warmup_wait_pool = :pool AND last_response LIKE '%held back a step: google deferred or bounced%'`,
            { pool: pool.id },
          )) > 0,
        { timeoutMs: 30_000 },
      ).catch(async (error) => {
        console.log(
          await db.sequelize.query(
            `SELECT state, attempts, last_response, warmup_wait_pool FROM mta_spool; SELECT * FROM ip_warmup_counts`,
          ),
        );
        throw error;
      });
      // The counts and the attempts the rows record, in one snapshot (an MTA batch commits both together).
      // Under load a row can start waiting before its first try (the hold came from the others'):
      // every attempt made is counted, whether or not all 14 were tried yet.
      const [counted] = await db.sequelize.query<{ sent: number; refused: number; attempted: number }>(
        `SELECT c.sent, c.refused,
                (SELECT coalesce(sum(s.attempts), 0)::int FROM mta_spool s
                  WHERE s.recipients->0->>'address' LIKE 'deferred%@gmail.test') AS attempted
           FROM ip_warmup_counts c JOIN ip_pool_addresses a ON a.id = c.address_id
          WHERE a.ip = :ip AND c.provider = 'google' AND c.day = (now() AT TIME ZONE 'UTC')::date`,
        { replacements: { ip: SOURCES.a }, type: 'SELECT' as never },
      );
      refusedAttempts = counted.attempted;
      assert.is(counted.sent - sentBefore, counted.attempted, JSON.stringify({ ...counted, sentBefore }));
      assert.ok(counted.sent >= 20, `the hold comes past 20 recipients today: ${JSON.stringify(counted)}`);
      assert.ok(
        counted.refused >= counted.attempted && counted.refused <= counted.sent - sentBefore,
        JSON.stringify(counted),
      );
    } finally {
      await db.close();
    }
    const listed = ((await admin('GET', `/platform/ip-pools/${pool.id}`)).body as IpPool).addresses.find(
      (address) => address.ip === SOURCES.a,
    )!;
    assert.equal(
      { day: listed.warmup.day, step: googleOf(listed).step, ceiling: googleOf(listed).ceiling },
      { day: 30, step: 29, ceiling: 10 },
    );
    assert.ok(googleOf(listed).refused >= refusedAttempts, `${googleOf(listed).refused} < ${refusedAttempts}`);
  } finally {
    mxScript.rcpt = undefined;
  }
});

test.run();
