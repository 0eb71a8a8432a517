// /platform/ip-pools and `svc pools` (issue 29): platform admins only, validated bodies, the warm-up
// driven by a test clock (day 1, 10, 30, then warm), the doctor's forward-confirmed reverse DNS check
// against the test DNS server serving PTR records, and the CLI commands run in-process.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { createAdmin, createTenant, type AdminFixture } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { listIpPools } from '../daemon/modules/ip-pools/service.ts';
import { runDoctor } from '../daemon/modules/doctor/service.ts';
import { checkPoolAddressesBindable } from '../daemon/modules/doctor/pool-bind.ts';
import { defaultWarmupSchedule, holdsRamp, warmupDay } from '../daemon/mta/warmup.ts';
import { describePools } from '../cli/services/ip-pools.ts';
import { SourceAddressChooser, type SourceUse } from '../daemon/mta/source-address.ts';
import { createSql } from '../daemon/db/sql.ts';
import type { IpPool } from '../shared/schemas/ip-pools.ts';

let ctx: TestContext;
let dns: TestDnsServer;
let root: AdminFixture;
let plain: AdminFixture;
let tenantId: string;
let cli: InProcessCli;
const as = (admin: AdminFixture) => ({ authorization: `Bearer ${admin.token}` });
/** The test clock's day 1. */
const DAY_ONE = new Date('2026-11-01T09:30:00Z');
const DAY_MS = 86_400_000;

test.before(async () => {
  dns = await startDnsServer();
  ctx = await createTestContext({ env: { DNS_SERVERS: dns.address } });
  root = await createAdmin(ctx.app, { platformAdmin: true });
  plain = await createAdmin(ctx.app);
  tenantId = await createTenant(root.id, 'Pooled');
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  cli.writeProfile({ accessToken: root.token, refreshToken: 'unused' });
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
  await dns?.close();
});

const post = (url: string, payload: unknown, admin = root) =>
  ctx.app.inject({ method: 'POST', url, headers: as(admin), payload: payload as object });

test('platform admins only; bodies are validated; conflicts are 409 with the contract body', async () => {
  const denied = await post('/platform/ip-pools', { name: 'x' }, plain);
  assert.is(denied.statusCode, 403);
  assertErrorBody(denied, 403);
  const badIp = await post('/platform/ip-pools', { name: 'x', addresses: [{ ip: '300.1.1.1', ehloName: 'a.test' }] });
  assert.is(badIp.statusCode, 400);
  assertErrorBody(badIp, 400);
  const badName = await post('/platform/ip-pools', {
    name: 'x',
    addresses: [{ ip: '127.0.2.1', ehloName: 'not a name' }],
  });
  assert.is(badName.statusCode, 400);
  const noDefault = await post('/platform/ip-pools', {
    name: 'x',
    schedule: { days: 2, providers: { google: [1, 2] } },
  });
  assert.is(noDefault.statusCode, 400);
  assert.match(noDefault.json().message, /'default' ceiling list is required/);
  const created = await post('/platform/ip-pools', {
    name: 'api-pool',
    addresses: [{ ip: '127.0.2.10', ehloName: 'Out1.Example.Test.' }],
  });
  assert.is(created.statusCode, 201, created.body);
  const pool = created.json() as IpPool;
  assert.is(pool.addresses[0].ehloName, 'out1.example.test', 'EHLO names are kept lower case without the dot');
  assert.is(pool.defaultSchedule, true);
  assert.equal(pool.schedule, defaultWarmupSchedule());
  const again = await post('/platform/ip-pools', { name: 'api-pool' });
  assert.is(again.statusCode, 409);
  assertErrorBody(again, 409);
  const sameIp = await post('/platform/ip-pools', {
    name: 'other',
    addresses: [{ ip: '127.0.2.10', ehloName: 'a.test' }],
  });
  assert.is(sameIp.statusCode, 409, 'an IP belongs to one pool');
  const ghost = await post(`/platform/ip-pools/${pool.id}/assignments`, {
    tenantId: '00000000-0000-4000-8000-000000000000',
  });
  assert.is(ghost.statusCode, 404);
  const assigned = await post(`/platform/ip-pools/${pool.id}/assignments`, { tenantId, stream: 'campaign' });
  assert.is(assigned.statusCode, 201);
  assert.equal(assigned.json().assignments[0].stream, 'campaign');
  const busy = await ctx.app.inject({ method: 'DELETE', url: `/platform/ip-pools/${pool.id}`, headers: as(root) });
  assert.is(busy.statusCode, 409);
  const missing = await ctx.app.inject({
    method: 'GET',
    url: '/platform/ip-pools/00000000-0000-4000-8000-000000000000',
    headers: as(root),
  });
  assert.is(missing.statusCode, 404);
});

test('test clock: day 1, 10 and 30 of the warm-up with ceilings per provider, then warm', async () => {
  const created = await post('/platform/ip-pools', {
    name: 'clocked',
    addresses: [
      { ip: '127.0.2.20', ehloName: 'new.example.test', warmupStartedAt: DAY_ONE.toISOString() },
      { ip: '127.0.2.21', ehloName: 'old.example.test', warmup: false },
    ],
  });
  assert.is(created.statusCode, 201, created.body);
  const id = (created.json() as IpPool).id;
  const schedule = defaultWarmupSchedule();
  await ctx.db.sequelize.query(
    `INSERT INTO ip_warmup_counts (address_id, provider, day, sent)
     SELECT id, 'google', CAST(:day AS date), 40 FROM ip_pool_addresses WHERE ip = '127.0.2.20'`,
    { replacements: { day: '2026-11-10' } },
  );
  const at = async (offsetDays: number) => {
    const { data } = await listIpPools(ctx.deps, new Date(DAY_ONE.getTime() + offsetDays * DAY_MS));
    return data.find((pool) => pool.id === id)!;
  };
  const ceilings = (address: IpPool['addresses'][number]) =>
    Object.fromEntries(address.warmup.providers.map((p) => [p.provider, p.ceiling]));

  const day1 = await at(0);
  assert.equal([day1.addresses[0].warmup.state, day1.addresses[0].warmup.day], ['warming', 1]);
  assert.equal(ceilings(day1.addresses[0]), {
    google: schedule.providers.google[0],
    yahoo: schedule.providers.yahoo[0],
    microsoft: schedule.providers.microsoft[0],
    apple: schedule.providers.apple[0],
    default: schedule.providers.default[0],
  });
  assert.is(schedule.providers.google[0], 50, 'the default starts at 50 a day to Google');
  assert.equal(day1.addresses[1].warmup, {
    state: 'warm',
    day: null,
    days: 30,
    providers: day1.addresses[1].warmup.providers.map((p) => ({ ...p, ceiling: null })),
  });

  const day10 = await at(9);
  assert.is(day10.today, '2026-11-10');
  assert.is(day10.addresses[0].warmup.day, 10);
  assert.equal(day10.addresses[0].warmup.providers[0], {
    provider: 'google',
    sent: 40,
    refused: 0,
    heldDays: 0,
    step: 10,
    ceiling: 5_000,
  });

  const day30 = await at(29);
  assert.is(day30.addresses[0].warmup.day, 30);
  assert.is(ceilings(day30.addresses[0]).google, 250_000);
  const day31 = await at(30);
  assert.is(day31.addresses[0].warmup.state, 'warm');
  assert.is(ceilings(day31.addresses[0]).google, null);
  // Days are UTC calendar days: 23:59 on the start day is still day 1, 00:00 the next is day 2.
  assert.is(warmupDay(DAY_ONE, new Date('2026-11-01T23:59:59Z')), 1);
  assert.is(warmupDay(DAY_ONE, new Date('2026-11-02T00:00:00Z')), 2);

  const edited = await ctx.app.inject({
    method: 'PUT',
    url: `/platform/ip-pools/${id}/schedule`,
    headers: as(root),
    payload: { days: 3, providers: { default: [10, 20, 30], google: [5, 6, 7] } },
  });
  assert.is(edited.statusCode, 200, edited.body);
  assert.is((edited.json() as IpPool).defaultSchedule, false);
  const shorter = await at(3);
  assert.is(shorter.addresses[0].warmup.state, 'warm', 'a 3-day schedule ends on day 4');
  assert.equal(ceilings((await at(1)).addresses[0]), { google: 6, yahoo: 20, microsoft: 20, apple: 20, default: 20 });
});

test("doctor: each address's PTR is its EHLO name and the name resolves back (FCrDNS)", async () => {
  await post('/platform/ip-pools', {
    name: 'dns-checked',
    addresses: [{ ip: '127.51.100.7', ehloName: 'mta7.example.test' }],
  });
  const check = async () =>
    (await runDoctor({ ...ctx.deps, sequelize: ctx.db.sequelize, embedded: false, secrets: null })).checks.find(
      (c) => c.name === 'ip-pools',
    )!;
  const none = await check();
  assert.is(none.ok, false);
  assert.match(none.message, /127\.51\.100\.7 has no PTR record \(it should be mta7\.example\.test\)/);
  assert.match(none.fix!, /PTR to the EHLO name/);
  // Every pool address of the earlier tests resolves too, except the one this test breaks on purpose.
  for (const [ip, name] of [
    ['127.0.2.10', 'out1.example.test'],
    ['127.0.2.20', 'new.example.test'],
    ['127.0.2.21', 'old.example.test'],
    ['127.51.100.7', 'mta7.example.test'],
  ]) {
    dns.zone.ptr.set(`${ip.split('.').reverse().join('.')}.in-addr.arpa`, [name]);
    dns.zone.a.set(name, [ip]);
  }
  dns.zone.a.set('mta7.example.test', ['127.51.100.8']);
  const oneWay = await check();
  assert.is(oneWay.ok, false);
  assert.match(oneWay.message, /mta7\.example\.test resolves to 127\.51\.100\.8, not back to 127\.51\.100\.7/);
  dns.zone.a.set('mta7.example.test', ['127.51.100.7']);
  const good = await check();
  assert.is(good.ok, true, good.message);
  assert.match(good.message, /127\.51\.100\.7 ⇄ mta7\.example\.test/);
  assert.ok(dns.queries.includes('PTR 7.100.51.127.in-addr.arpa'), dns.queries.join(', '));
});

test('the chooser with a test clock: day 1 ceiling reached → wait until 00:00 UTC; day 30 → room again', async () => {
  const other = await createTenant(root.id, 'Chooser');
  const created = await post('/platform/ip-pools', {
    name: 'chooser',
    addresses: [{ ip: '127.0.2.40', ehloName: 'c.example.test', warmupStartedAt: DAY_ONE.toISOString() }],
    schedule: {
      days: 30,
      providers: { default: Array<number>(30).fill(5), google: [2, ...Array<number>(29).fill(100)] },
    },
  });
  assert.is(created.statusCode, 201, created.body);
  await post(`/platform/ip-pools/${created.json().id}/assignments`, { tenantId: other, stream: 'transactional' });
  const sql = createSql(ctx.databaseUrl, { max: 2, embedded: ctx.db.embedded });
  let now = new Date(DAY_ONE.getTime() + 3_600_000);
  const chooser = new SourceAddressChooser({ sql, fallback: { ehloName: 'node.test' }, now: () => now, refreshMs: 0 });
  const row = { tenantId: other, projectId: null, stream: 'transactional' as const };
  const google = ['gmail-smtp-in.l.google.com'];
  try {
    const first = await chooser.choose(row, google, 1);
    const second = await chooser.choose(row, google, 1);
    assert.equal([first.kind, second.kind], ['address', 'address']);
    assert.equal(first.kind === 'address' && first.session, { ehloName: 'c.example.test', localAddress: '127.0.2.40' });
    const third = await chooser.choose(row, google, 1);
    assert.is(third.kind, 'wait', 'two in flight fill a ceiling of 2');
    assert.is(third.kind === 'wait' && third.until.toISOString(), '2026-11-02T00:00:00.000Z');
    chooser.unused((first as { use: SourceUse }).use);
    assert.is((await chooser.choose(row, google, 1)).kind, 'address', 'a reservation given back makes room');
    assert.is((await chooser.choose(row, ['mx1.other.test'], 5)).kind, 'address', "the default provider's own ceiling");
    assert.is((await chooser.choose({ ...row, stream: 'campaign' }, google, 1)).kind, 'default', 'campaigns: no pool');
    assert.is((await chooser.choose({ ...row, tenantId: null }, google, 1)).kind, 'default', 'system mail: no pool');
    now = new Date(DAY_ONE.getTime() + 29 * DAY_MS);
    const day30 = await chooser.choose(row, google, 50);
    assert.is(day30.kind, 'address', 'day 30: a new day and a ceiling of 100');
  } finally {
    await sql.close();
  }
});

test('refusals hold the ramp: a held day repeats its step and lengthens the warm-up; a held today steps back', async () => {
  // The rule, pure: at least 10 % refused of at least 20 recipients.
  assert.equal(
    [
      holdsRamp({ sent: 20, refused: 2 }),
      holdsRamp({ sent: 19, refused: 19 }),
      holdsRamp({ sent: 100, refused: 9 }),
      holdsRamp({ sent: 100, refused: 10 }),
    ],
    [true, false, false, true],
  );
  const other = await createTenant(root.id, 'Held');
  const created = await post('/platform/ip-pools', {
    name: 'held',
    addresses: [{ ip: '127.0.2.50', ehloName: 'h.example.test', warmupStartedAt: DAY_ONE.toISOString() }],
    schedule: { days: 5, providers: { default: [100, 200, 300, 400, 500], google: [10, 20, 30, 40, 50] } },
  });
  assert.is(created.statusCode, 201, created.body);
  const poolId = (created.json() as IpPool).id;
  await post(`/platform/ip-pools/${poolId}/assignments`, { tenantId: other });
  // Day 2: 30 % refused (held); day 3: 5 % (not); day 4: all 10 refused, but under the minimum of 20 (not).
  await ctx.db.sequelize.query(
    `INSERT INTO ip_warmup_counts (address_id, provider, day, sent, refused)
     SELECT id, 'google', d.day::date, d.sent, d.refused FROM ip_pool_addresses,
            (VALUES ('2026-11-02', 20, 6), ('2026-11-03', 100, 5), ('2026-11-04', 10, 10)) AS d(day, sent, refused)
      WHERE ip = '127.0.2.50'`,
  );
  const googleOn = async (offsetDays: number) => {
    const { data } = await listIpPools(ctx.deps, new Date(DAY_ONE.getTime() + offsetDays * DAY_MS + 3_600_000));
    const address = data.find((pool) => pool.id === poolId)!.addresses[0];
    return { warmup: address.warmup, google: address.warmup.providers.find((p) => p.provider === 'google')! };
  };
  const day5 = await googleOn(4);
  assert.equal(day5.google, { provider: 'google', sent: 0, refused: 0, heldDays: 1, step: 4, ceiling: 40 });
  assert.is(day5.warmup.day, 5);
  assert.equal(
    day5.warmup.providers.find((p) => p.provider === 'yahoo'),
    { provider: 'yahoo', sent: 0, refused: 0, heldDays: 0, step: 5, ceiling: 500 },
    "another provider's ramp is its own",
  );
  // Day 6 of a 5-day schedule: warm with the default, still warming with Google (a day longer).
  const day6 = await googleOn(5);
  assert.equal([day6.warmup.state, day6.google.step, day6.google.ceiling], ['warming', 5, 50]);
  assert.equal(
    day6.warmup.providers.find((p) => p.provider === 'default')!.ceiling,
    null,
    'warm with providers that refused nothing',
  );
  assert.equal((await googleOn(6)).warmup.state, 'warm', 'day 7: warm with every provider');

  // Day 5 through the chooser, with today's refusals: 25 sent, 5 refused holds today, one step back (30):
  // 25 + 6 passes it, and the wait says why.
  await ctx.db.sequelize.query(
    `INSERT INTO ip_warmup_counts (address_id, provider, day, sent, refused)
     SELECT id, 'google', '2026-11-05', 25, 5 FROM ip_pool_addresses WHERE ip = '127.0.2.50'`,
  );
  const sql = createSql(ctx.databaseUrl, { max: 2, embedded: ctx.db.embedded });
  const now = new Date(DAY_ONE.getTime() + 4 * DAY_MS + 3_600_000);
  const chooser = new SourceAddressChooser({ sql, fallback: { ehloName: 'node.test' }, now: () => now, refreshMs: 0 });
  const row = { tenantId: other, projectId: null, stream: 'transactional' as const };
  try {
    assert.is((await chooser.choose(row, ['gmail-smtp-in.l.google.com'], 5)).kind, 'address', '25 + 5 ≤ 30');
    const full = await chooser.choose(row, ['gmail-smtp-in.l.google.com'], 1);
    assert.is(full.kind, 'wait');
    assert.match(
      full.kind === 'wait' ? full.reason : '',
      /^451 4\.7\.0 warm-up: every address of the pool is at today's ceiling for google \(held back a step: google deferred or bounced too many of today's recipients\); waiting until 2026-11-06T00:00:00\.000Z$/,
    );
    assert.is((await chooser.choose(row, ['mx.other.test'], 100)).kind, 'address', 'the default provider is not held');
  } finally {
    await sql.close();
  }
  // What `svc pools` prints of it (the screen shows the same note).
  const { data } = await listIpPools(ctx.deps, now);
  const text = describePools(data.filter((pool) => pool.id === poolId));
  assert.match(text, /127\.0\.2\.50 {2}h\.example\.test {2}weight 1 {2}warm-up day 5\/5/);
  assert.match(text, /\n {4}google {5}[█░]{20} 25\/30 {2}5 refused · step 3 \(1 day held\)\n/);
  assert.match(text, /\n {4}default {4}[█░]{20} 0\/500$/);
});

test('svc pools: create, add-address, assign, schedule (show, edit from a file, reset), list, remove', async () => {
  const created = await cli.run(['pools', 'create', 'cli-pool', '--address', '127.0.113.5=a.cli.test', '--json']);
  assert.is(created.code, 0, created.stdout + created.stderr);
  assert.is(created.json.addresses[0].warmup.day, 1);
  const added = await cli.run([
    'pools',
    'add-address',
    'cli-pool',
    '127.0.113.6',
    '--ehlo',
    'b.cli.test',
    '--warm',
    '--weight',
    '2',
    '--json',
  ]);
  assert.is(added.code, 0, added.stdout);
  assert.equal(
    added.json.addresses.map((a: any) => [a.ip, a.weight, a.warmup.state]),
    [
      ['127.0.113.5', 1, 'warming'],
      ['127.0.113.6', 2, 'warm'],
    ],
  );
  const assigned = await cli.run([
    'pools',
    'assign',
    tenantId,
    '--pool',
    'cli-pool',
    '--stream',
    'transactional',
    '--json',
  ]);
  assert.is(assigned.code, 0, assigned.stdout);
  assert.equal(
    assigned.json.assignments.map((a: any) => [a.tenantName, a.stream]),
    [['Pooled', 'transactional']],
  );
  const shown = await cli.run(['pools', 'schedule', 'cli-pool']);
  assert.match(shown.stdout, /30-day warm-up \(the shipped default\)/);
  assert.match(shown.stdout, /google\s+d1 50 {2}d2 100 {2}d3 500/);
  const dir = mkdtempSync(join(tmpdir(), 'svc-pools-'));
  try {
    const file = join(dir, 'schedule.json');
    writeFileSync(file, JSON.stringify({ days: 2, providers: { default: [7, 8] } }));
    const edited = await cli.run(['pools', 'schedule', 'cli-pool', '--file', file, '--json']);
    assert.equal(edited.json, { days: 2, providers: { default: [7, 8] } });
    writeFileSync(file, JSON.stringify({ days: 2, providers: { default: [7] } }));
    const refused = await cli.run(['pools', 'schedule', 'cli-pool', '--file', file, '--json']);
    assert.is(refused.code, 1);
    assert.is(refused.json.error.status, 400);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const reset = await cli.run(['pools', 'schedule', 'cli-pool', '--reset', '--json']);
  assert.is(reset.json.days, 30);
  const moved = await cli.run([
    'pools',
    'set-address',
    'cli-pool',
    '127.0.113.5',
    '--warmup-start',
    new Date(Date.now() - 9 * DAY_MS).toISOString(),
    '--json',
  ]);
  assert.is(moved.json.addresses[0].warmup.day, 10);
  const listed = await cli.run(['pools', '--pool', 'cli-pool']);
  assert.is(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /127\.0\.113\.5 {2}a\.cli\.test {2}weight 1 {2}warm-up day 10\/30/);
  assert.match(listed.stdout, /google\s+░+ 0\/5000/);
  assert.match(listed.stdout, /127\.0\.113\.6 {2}b\.cli\.test {2}weight 2 {2}warm/);
  assert.match(listed.stdout, /tenants: Pooled transactional/);
  const all = await cli.run(['pools', '--json']);
  assert.ok(all.json.data.some((pool: IpPool) => pool.name === 'cli-pool'));
  const renamed = await cli.run(['pools', 'rename', 'cli-pool', 'cli-pool-2', '--json']);
  assert.is(renamed.json.name, 'cli-pool-2');
  const removed = await cli.run(['pools', 'remove-address', 'cli-pool-2', '127.0.113.6', '--json']);
  assert.equal(removed.json, { ok: true });
  const unassigned = await cli.run([
    'pools',
    'assign',
    tenantId,
    '--pool',
    'cli-pool-2',
    '--stream',
    'transactional',
    '--remove',
    '--json',
  ]);
  assert.equal(unassigned.json.assignments, []);
  const deleted = await cli.run(['pools', 'delete', 'cli-pool-2', '--json']);
  assert.equal(deleted.json, { ok: true });
  const gone = await cli.run(['pools', '--pool', 'cli-pool-2', '--json']);
  assert.is(gone.code, 1);
});

test('pool addresses checked against reality: non-unicast and documentation addresses 400, an address this node cannot bind 422, the doctor binds each', async () => {
  const refused: Array<[string, RegExp]> = [
    ['203.0.113.77', /203\.0\.113\.77 is a documentation address \(TEST-NET-3/],
    ['192.0.2.1', /documentation address \(TEST-NET-1/],
    ['0.0.0.0', /the unspecified address/],
    ['255.255.255.255', /the broadcast address/],
    ['224.0.0.1', /a multicast address \(224\.0\.0\.0\/4\)/],
    ['240.0.0.9', /a reserved address/],
    ['::', /the unspecified address \(::\)/],
    ['ff02::1', /a multicast address \(ff00::\/8\)/],
    ['2001:db8::25', /documentation address \(2001:db8::\/32/],
    ['::ffff:192.0.2.5', /documentation address/],
  ];
  for (const [ip, why] of refused) {
    const res = await post('/platform/ip-pools', { name: 'unreal', addresses: [{ ip, ehloName: 'mx.example.test' }] });
    assertErrorBody(res, 400, 'VALIDATION_FAILED');
    assert.match(res.json().message, why, `${ip}: ${res.body}`);
    assert.match(res.json().message, 'mail cannot be sent from it');
    assert.is(res.json().details[0].field, 'addresses.0.ip');
  }
  const pool = await post('/platform/ip-pools', {
    name: 'reality',
    addresses: [{ ip: '127.0.0.77', ehloName: 'mx77.example.test' }],
  });
  assert.is(pool.statusCode, 201, pool.body);
  const poolId = pool.json().id as string;
  // Not on any interface of this host: binding it fails with EADDRNOTAVAIL.
  const absent = await post(`/platform/ip-pools/${poolId}/addresses`, {
    ip: '10.254.254.254',
    ehloName: 'x.example.test',
  });
  assertErrorBody(absent, 422, 'ADDRESS_NOT_BINDABLE');
  assert.match(
    absent.json().message,
    /^10\.254\.254\.254 cannot be bound on node \S+: EADDRNOTAVAIL\. Add the address/,
  );
  const documented = await post(`/platform/ip-pools/${poolId}/addresses`, {
    ip: '2001:db8::25',
    ehloName: 'x.example.test',
  });
  assertErrorBody(documented, 400, 'VALIDATION_FAILED');
  const stored = await ctx.db.sequelize.query<{ ip: string }>(
    `SELECT ip FROM ip_pool_addresses WHERE pool_id = :poolId ORDER BY ip`,
    { replacements: { poolId }, type: 'SELECT' as never },
  );
  assert.equal(
    stored.map((row) => row.ip),
    ['127.0.0.77'],
  );

  // Another node added an address this one does not hold: the doctor of a direct-delivery worker says so.
  await ctx.db.sequelize.query(
    `INSERT INTO ip_pool_addresses (pool_id, ip, ehlo_name) VALUES (:poolId, '10.254.254.253', 'y.example.test')`,
    { replacements: { poolId } },
  );
  const doctor = (config: Partial<typeof ctx.deps.config>) =>
    checkPoolAddressesBindable({ config: { ...ctx.deps.config, ...config }, sequelize: ctx.db.sequelize });
  const worker = await doctor({ delivery: 'direct', role: 'worker' });
  assert.is(worker.ok, false);
  assert.match(
    worker.message,
    /^1 of \d+ pool address\(es\) cannot be bound on this node: 10\.254\.254\.253 cannot be bound on node \S+: EADDRNOTAVAIL\./,
  );
  assert.match(worker.fix!, /svc doctor --local on every worker node/);
  const relay = await doctor({ delivery: 'relay', role: 'all' });
  assert.is(relay.ok, true);
  assert.match(relay.message, /does not deliver directly/);
  const all = await runDoctor({ ...ctx.deps, sequelize: ctx.db.sequelize, embedded: false, secrets: null });
  assert.ok(
    all.checks.some((check) => check.name === 'pool-bind'),
    'registered with the other checks',
  );
  await ctx.db.sequelize.query(`DELETE FROM ip_pools WHERE id = :poolId`, { replacements: { poolId } });
  assert.is((await doctor({ delivery: 'direct', role: 'all' })).ok, true);
});

test.run();
