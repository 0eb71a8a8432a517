// Delivery shaping as platform admins set it (docs/mta.md "Shaping and reactions"): the routes
// (GET/PUT/POST /platform/providers, GET/DELETE /platform/reactions, POST/PATCH/DELETE
// /platform/reaction-rules, GET/PUT /platform/tenants/{id}/throttle) and the commands on them
// (`svc providers`, `svc providers set|add|lift`, `svc providers rules add|set|remove`, `svc tenants throttle`), run
// in-process against a listening app; the pure parts the loop keys on (reaction matching, the pacer).
import { test } from 'uvu';
import { QueryTypes } from 'sequelize';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createAdmin, createTenant } from './helpers/fixtures.ts';
import { listen } from './helpers/svc-cli.ts';
import { InProcessCli, operationMatchers } from './helpers/svc-inprocess.ts';
import { assertErrorBody } from './helpers/error-body.ts';
import { loadProviderRules } from '../daemon/mta/sql/providers.ts';
import { loadReactionRules, recordReactionStatement } from '../daemon/mta/sql/reactions.ts';
import { loadTenantThrottles, takeHourlySlot, setTenantThrottle } from '../daemon/mta/sql/throttles.ts';
import { reactionTo } from '../daemon/mta/reactions.ts';
import { Pacer, Shaper } from '../daemon/mta/shaping.ts';
import { providerOf } from '../daemon/mta/providers.ts';
import type { RecipientResult } from '../daemon/mta/connection.ts';
import { classifyReply } from '../daemon/mta/outcome.ts';

let ctx: TestContext;
let cli: InProcessCli;
let admin: { authorization: string };
let member: { authorization: string };
let tenantId: string;

test.before(async () => {
  // Throttles are applied by the MTA's shaping: this platform delivers directly (test/throttle-relay.test.ts: relay).
  ctx = await createTestContext({ env: { DELIVERY: 'direct' } });
  const document = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json();
  cli = new InProcessCli(await listen(ctx), operationMatchers(document));
  const platformAdmin = await createAdmin(ctx.app, { platformAdmin: true });
  const owner = await createAdmin(ctx.app);
  tenantId = await createTenant(owner.id, 'Acme');
  admin = { authorization: `Bearer ${platformAdmin.token}` };
  member = { authorization: `Bearer ${owner.token}` };
  cli.writeProfile({ accessToken: platformAdmin.token, tenantId, tenantName: 'Acme', email: platformAdmin.email });
});
test.after(async () => {
  cli?.cleanup();
  await ctx?.close();
});

const reply = (response: string): RecipientResult[] => [{ address: 'a@x.test', verdict: classifyReply(response) }];

test('the seeded reaction rules: Gmail 4.7.28, Yahoo TSS04, Microsoft 5.7.515, any 421 try again later', async () => {
  const rules = await loadReactionRules(ctx.db.sql);
  const at = (providerKey: string) => ({ providerKey, domain: 'x.test', tenantId, emailId: null });
  const gmail = reactionTo(rules, at('google'), reply('421 4.7.28 [192.0.2.1] … temporarily rate limited.'));
  assert.equal([gmail?.rule.action, gmail?.rule.minutes, gmail?.domain], ['suspend', 15, null]);
  const yahoo = reactionTo(rules, at('yahoo'), reply('421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred'));
  assert.equal([yahoo?.rule.action, yahoo?.rule.factor], ['slow', 0.5]);
  const microsoft = reactionTo(rules, at('microsoft'), reply('550 5.7.515 Access denied, sending domain x'));
  assert.is(microsoft?.rule.action, 'pause_tenant');
  // The Gmail code from another provider is not Gmail's rate limit; a 421 "try again later" from anyone
  // suspends that one destination, and `default` (not one provider) is always one destination.
  assert.is(reactionTo(rules, at('yahoo'), reply('550 4.7.28 nope')), null);
  const busy = reactionTo(rules, at('default'), reply('421 Too busy, try again later'));
  assert.equal([busy?.rule.action, busy?.rule.scope, busy?.domain], ['suspend', 'destination', 'x.test']);
  assert.is(reactionTo(rules, at('google'), reply('250 2.0.0 OK')), null, 'a delivery draws nothing');
  assert.is(reactionTo(rules, at('default'), reply('451 4.7.1 greylisted')), null);
  // Recorded once while in force: the other rows in flight drew the same reply.
  const statement = recordReactionStatement(gmail!);
  const first = await ctx.db.sql.pool.query(statement.text, statement.values);
  const again = await ctx.db.sql.pool.query(statement.text, statement.values);
  assert.equal([first.rowCount, again.rowCount], [1, 0]);
});

test('the pacer spaces reservations, no burst; a slower interval applies from the next one', () => {
  const pacer = new Pacer(500);
  assert.equal([pacer.reserve(1_000), pacer.reserve(1_000), pacer.reserve(1_100)], [1_000, 1_500, 2_000]);
  pacer.intervalMs = 2_000;
  assert.equal([pacer.reserve(1_200), pacer.reserve(1_200)], [2_500, 4_500]);
  assert.is(pacer.reserve(10_000), 10_000, 'idle time is not saved up as a burst');
});

test('GET /platform/providers: the shipped rules, platform admins only', async () => {
  const res = await ctx.app.inject({ method: 'GET', url: '/platform/providers', headers: admin });
  assert.is(res.statusCode, 200, res.body);
  const google = res.json().data.find((p: { key: string }) => p.key === 'google');
  assert.equal([google.maxConnections, google.maxMessagesPerConnection, google.origin], [5, 50, 'shipped']);
  assert.is(res.json().data.at(-1).key, 'default');
  assert.is(res.json().workerNodes, 1);
  const denied = await ctx.app.inject({ method: 'GET', url: '/platform/providers', headers: member });
  assertErrorBody(denied, 403);
});

test('PUT and POST /platform/providers: edits keep the other fields, bad input is a 4xx', async () => {
  const put = await ctx.app.inject({
    method: 'PUT',
    url: '/platform/providers/yahoo',
    headers: admin,
    payload: { messagesPerMinute: 600 },
  });
  assert.is(put.statusCode, 200, put.body);
  assert.equal(
    [put.json().messagesPerMinute, put.json().maxMessagesPerConnection, put.json().origin],
    [600, 20, 'edited'],
  );
  const unknown = await ctx.app.inject({
    method: 'PUT',
    url: '/platform/providers/nobody',
    headers: admin,
    payload: { maxConnections: 1 },
  });
  assertErrorBody(unknown, 404);
  for (const payload of [{}, { maxConnections: 0 }, { mxPatterns: ['Not A Host'] }, { extra: 1 }]) {
    const bad = await ctx.app.inject({ method: 'PUT', url: '/platform/providers/yahoo', headers: admin, payload });
    assertErrorBody(bad, 400);
  }
  const defaultPatterns = await ctx.app.inject({
    method: 'PUT',
    url: '/platform/providers/default',
    headers: admin,
    payload: { mxPatterns: ['*.example.net'] },
  });
  assert.is(defaultPatterns.statusCode, 400);
  const created = await ctx.app.inject({
    method: 'POST',
    url: '/platform/providers',
    headers: admin,
    payload: {
      key: 'gmail-alt',
      label: 'One Google MX set, shaped apart',
      mxPatterns: ['*.alt.google.com'],
      maxConnections: 2,
      maxMessagesPerConnection: 10,
    },
  });
  assert.is(created.statusCode, 201, created.body);
  assert.equal([created.json().origin, created.json().messagesPerMinute], ['custom', null]);
  const rules = await loadProviderRules(ctx.db.sql);
  assert.is(providerOf(['mx1.alt.google.com'], rules).key, 'gmail-alt', "an admin's own provider is matched first");
  assert.is(providerOf(['aspmx.l.google.com'], rules).key, 'google');
  const twice = await ctx.app.inject({
    method: 'POST',
    url: '/platform/providers',
    headers: admin,
    payload: created.json(),
  });
  assert.is(twice.statusCode, 400, 'origin and updatedAt are not input');
  const conflict = await ctx.app.inject({
    method: 'POST',
    url: '/platform/providers',
    headers: admin,
    payload: { key: 'google', label: 'x', mxPatterns: ['x.test'], maxConnections: 1, maxMessagesPerConnection: 1 },
  });
  assertErrorBody(conflict, 409);
});

test('svc providers: rules, reactions, what is in force; set and add with --json', async () => {
  const set = await cli.run([
    'providers',
    'set',
    'google',
    '--max-connections',
    '4',
    '--per-connection',
    '40',
    '--json',
  ]);
  assert.is(set.code, 0, set.stdout + set.stderr);
  assert.equal([set.json.maxConnections, set.json.maxMessagesPerConnection], [4, 40]);
  const none = await cli.run(['providers', 'set', 'yahoo', '--per-minute', 'none', '--json']);
  assert.is(none.json.messagesPerMinute, null);
  const bad = await cli.run(['providers', 'set', 'yahoo', '--per-minute', 'fast', '--json']);
  assert.is(bad.code, 2);
  const nothing = await cli.run(['providers', 'set', 'yahoo', '--json']);
  assert.is(nothing.code, 2);
  const add = await cli.run([
    'providers',
    'add',
    'proofpoint',
    '--label',
    'Proofpoint',
    '--mx-pattern',
    '*.pphosted.com',
    '--max-connections',
    '3',
    '--per-connection',
    '30',
    '--per-minute',
    '120',
    '--json',
  ]);
  assert.is(add.code, 0, add.stdout + add.stderr);
  assert.equal([add.json.key, add.json.messagesPerMinute], ['proofpoint', 120]);
  const human = await cli.run(['providers']);
  assert.is(human.code, 0, human.stderr);
  assert.match(human.stdout, /google\s+4\s+40/);
  assert.match(human.stdout, 'TSS04');
  assert.match(human.stdout, 'suspend'); // the suspension the first test recorded is in force
  const listed = await cli.run(['providers', '--json']);
  assert.ok(listed.json.providers.data.some((p: { key: string }) => p.key === 'proofpoint'));
  assert.ok(listed.json.reactions.data.some((a: { providerKey: string }) => a.providerKey === 'google'));
});

test('tenant throttles: the route, svc tenants throttle, and the hourly count', async () => {
  const empty = await ctx.app.inject({ method: 'GET', url: `/platform/tenants/${tenantId}/throttle`, headers: admin });
  assert.equal(empty.json(), { tenantId, messagesPerSecond: null, messagesPerHour: null });
  const set = await cli.run(['tenants', 'throttle', tenantId, '--per-second', '2.5', '--per-hour', '1000', '--json']);
  assert.is(set.code, 0, set.stdout + set.stderr);
  assert.equal(set.json, { tenantId, messagesPerSecond: 2.5, messagesPerHour: 1000 });
  const kept = await cli.run(['tenants', 'throttle', tenantId, '--per-hour', 'none', '--json']);
  assert.equal([kept.json.messagesPerSecond, kept.json.messagesPerHour], [2.5, null]);
  assert.equal(await loadTenantThrottles(ctx.db.sql), [{ tenantId, messagesPerSecond: 2.5, messagesPerHour: null }]);
  const shown = await cli.run(['tenants', 'throttle']);
  assert.match(shown.stdout, '2.5/s');
  const cleared = await ctx.app.inject({
    method: 'PUT',
    url: `/platform/tenants/${tenantId}/throttle`,
    headers: admin,
    payload: { messagesPerSecond: null, messagesPerHour: null },
  });
  assert.is(cleared.statusCode, 200);
  assert.equal(await loadTenantThrottles(ctx.db.sql), []);
  for (const payload of [{ messagesPerSecond: 0, messagesPerHour: null }, { messagesPerSecond: 1 }]) {
    const bad = await ctx.app.inject({
      method: 'PUT',
      url: `/platform/tenants/${tenantId}/throttle`,
      headers: admin,
      payload,
    });
    assertErrorBody(bad, 400);
  }
  const missing = await ctx.app.inject({
    method: 'PUT',
    url: '/platform/tenants/00000000-0000-4000-8000-000000000000/throttle',
    headers: admin,
    payload: { messagesPerSecond: 1, messagesPerHour: null },
  });
  assert.is(missing.statusCode, 404);
  const denied = await ctx.app.inject({
    method: 'GET',
    url: `/platform/tenants/${tenantId}/throttle`,
    headers: member,
  });
  assert.is(denied.statusCode, 403);
  // DELIVERY is each node's own: a live worker node that relays (another host) makes a throttle refused here.
  const put = () =>
    ctx.app.inject({
      method: 'PUT',
      url: `/platform/tenants/${tenantId}/throttle`,
      headers: admin,
      payload: { messagesPerSecond: 1, messagesPerHour: null },
    });
  await ctx.db.sequelize.query(
    `INSERT INTO daemon_nodes (id, hostname, pid, role, redis, delivery) VALUES
       ('mx-1:10:aaaa', 'mx-1', 10, 'worker', true, 'direct'), ('relay-1:11:bbbb', 'relay-1', 11, 'all', true, 'relay'),
       ('api-1:12:cccc', 'api-1', 12, 'api', true, 'relay')`,
  );
  const mixed = await put();
  assertErrorBody(mixed, 409, 'THROTTLE_NEEDS_DIRECT_DELIVERY');
  assert.match(
    mixed.json().message,
    'throttles apply to direct delivery; this platform delivers through a relay (DELIVERY=relay on worker node relay-1:11:bbbb)',
  );
  assert.equal(await loadTenantThrottles(ctx.db.sql), []);
  // An API-only node's DELIVERY does not matter: it sends nothing.
  await ctx.db.sequelize.query(`DELETE FROM daemon_nodes WHERE id = 'relay-1:11:bbbb'`);
  assert.is((await put()).statusCode, 200);
  assert.equal(await loadTenantThrottles(ctx.db.sql), [{ tenantId, messagesPerSecond: 1, messagesPerHour: null }]);
  await setTenantThrottle(ctx.db.sql, { tenantId, messagesPerSecond: null, messagesPerHour: null });
  await ctx.db.sequelize.query(`DELETE FROM daemon_nodes`);
  // Exact under concurrency: 10 takers for 3 places in the hour.
  await setTenantThrottle(ctx.db.sql, { tenantId, messagesPerSecond: null, messagesPerHour: 3 });
  const taken = await Promise.all(Array.from({ length: 10 }, () => takeHourlySlot(ctx.db.sql, tenantId, 3)));
  assert.is(taken.filter((next) => next === null).length, 3);
  const nextHour = taken.find((next) => next !== null)!;
  assert.is(nextHour % 3_600_000, 0);
  assert.ok(nextHour > Date.now() && nextHour <= Date.now() + 3_600_000);
});

test('reaction rules: added, changed, disabled and removed through the API and svc providers rules; bad rules are 400', async () => {
  const post = (payload: object, headers = admin) =>
    ctx.app.inject({ method: 'POST', url: '/platform/reaction-rules', headers, payload });
  assert.is((await post({ replyCode: 451, action: 'suspend', minutes: 5, description: 'x' }, member)).statusCode, 403);
  const refusals: Array<[object, string]> = [
    [{ action: 'suspend', minutes: 5, description: 'matches every reply' }, 'replyCode'],
    [{ textPattern: '(unclosed', action: 'suspend', minutes: 5, description: 'x' }, 'textPattern'],
    [{ replyCode: 451, action: 'slow', minutes: 10, description: 'no factor' }, 'factor'],
    [{ replyCode: 451, action: 'suspend', description: 'no minutes' }, 'minutes'],
    [{ replyCode: 451, action: 'pause_tenant', minutes: 5, description: 'x' }, 'minutes'],
    [{ replyCode: 451, providerKey: 'nobody', action: 'suspend', minutes: 5, description: 'x' }, 'providerKey'],
    [{ replyCode: 200, action: 'suspend', minutes: 5, description: 'x' }, 'replyCode'],
  ];
  for (const [payload, field] of refusals) {
    const res = await post(payload);
    assertErrorBody(res, 400, 'VALIDATION_FAILED');
    assert.ok(
      res.json().details.some((d: { field: string }) => d.field === field),
      `${JSON.stringify(payload)}: ${res.body}`,
    );
  }

  const added = await cli.run([
    'providers',
    'rules',
    'add',
    '--provider',
    'yahoo',
    '--text',
    '\\bTS03\\b',
    '--action',
    'slow',
    '--factor',
    '0.5',
    '--minutes',
    '60',
    '--description',
    'Yahoo TS03: permanently deferred',
    '--json',
  ]);
  assert.is(added.code, 0, added.stdout + added.stderr);
  const rule = added.json;
  assert.equal(
    [rule.providerKey, rule.textPattern, rule.action, rule.factor, rule.minutes, rule.enabled, rule.priority],
    ['yahoo', '\\bTS03\\b', 'slow', 0.5, 60, true, 100],
  );
  // The loop's own read matches it (the seeded rules of priority 10–90 come first and do not match).
  const at = { providerKey: 'yahoo', domain: 'yahoo.test', tenantId, emailId: null };
  const ts03 = reply('421 4.7.0 [TS03] All messages from 192.0.2.1 will be permanently deferred');
  assert.is(reactionTo(await loadReactionRules(ctx.db.sql), at, ts03)?.rule.id, rule.id);

  const disabled = await cli.run(['providers', 'rules', 'set', rule.id, '--disable', '--minutes', '30', '--json']);
  assert.is(disabled.code, 0, disabled.stderr);
  assert.equal([disabled.json.enabled, disabled.json.minutes, disabled.json.factor], [false, 30, 0.5]);
  assert.is(reactionTo(await loadReactionRules(ctx.db.sql), at, ts03), null, 'a disabled rule matches nothing');
  const listed = await ctx.app.inject({ method: 'GET', url: '/platform/reactions', headers: admin });
  // The list envelope every list answers with: the reactions in force under data, their rules beside.
  assert.equal(Object.keys(listed.json()).sort(), ['data', 'rules']);
  assert.ok(
    listed.json().rules.some((r: { id: string; enabled: boolean }) => r.id === rule.id && !r.enabled),
    'admins still see it',
  );
  const human = await cli.run(['providers']);
  assert.match(human.stdout, new RegExp(`${rule.id}\\s+no\\s+yahoo`));
  // Clearing its only match field would make it match every reply.
  const cleared = await ctx.app.inject({
    method: 'PATCH',
    url: `/platform/reaction-rules/${rule.id}`,
    headers: admin,
    payload: { textPattern: null },
  });
  assertErrorBody(cleared, 400, 'VALIDATION_FAILED');
  const empty = await ctx.app.inject({
    method: 'PATCH',
    url: `/platform/reaction-rules/${rule.id}`,
    headers: admin,
    payload: {},
  });
  assert.is(empty.statusCode, 400, 'a change of nothing');

  const removed = await cli.run(['providers', 'rules', 'remove', rule.id]);
  assert.is(removed.code, 0, removed.stderr);
  assert.match(removed.stdout, `Removed reaction rule ${rule.id}.`);
  const gone = await ctx.app.inject({ method: 'DELETE', url: `/platform/reaction-rules/${rule.id}`, headers: admin });
  assertErrorBody(gone, 404, 'NOT_FOUND');
  const again = await cli.run(['providers', 'rules', 'remove', rule.id]);
  assert.is.not(again.code, 0);
});

test('a suspension lifted early: ended at once, only the rows given back to its end are due, twice is 404; a tenant pause is 409', async () => {
  const active = async () =>
    (await ctx.app.inject({ method: 'GET', url: '/platform/reactions', headers: admin })).json().data as Array<{
      id: string;
      providerKey: string;
      kind: string;
      until: string | null;
    }>;
  // The Google suspension the first test recorded (15 minutes).
  const gmail = (await active()).find((a) => a.providerKey === 'google' && a.kind === 'suspend')!;
  assert.ok(gmail, 'the suspension is in force');
  await ctx.db.sequelize.query(
    `INSERT INTO destination_providers (domain, provider) VALUES ('gmail.test', 'google'), ('yahoo.test', 'yahoo')
     ON CONFLICT (domain) DO UPDATE SET provider = EXCLUDED.provider`,
  );
  const spool = async (domain: string, runAt: string) => {
    const [row] = await ctx.db.sequelize.query<{ id: string }>(
      `INSERT INTO mta_spool (tenant_id, domain, recipients, envelope_from, message, run_at, expires_at)
       VALUES (:tenantId, :domain, '[]', 'b@x.test', 'x', CAST(:runAt AS timestamptz), now() + interval '1 day')
       RETURNING id::text`,
      { replacements: { tenantId, domain, runAt }, type: QueryTypes.SELECT },
    );
    return row.id;
  };
  const heldByIt = await spool('gmail.test', gmail.until!);
  const retryLater = await spool('gmail.test', new Date(Date.parse(gmail.until!) + 3_600_000).toISOString());
  const otherProvider = await spool('yahoo.test', gmail.until!);

  const lifted = await cli.run(['providers', 'lift', gmail.id, '--json']);
  assert.is(lifted.code, 0, lifted.stdout + lifted.stderr);
  assert.equal(lifted.json, { id: gmail.id, rowsDue: 1 });
  const due = await ctx.db.sequelize.query<{ id: string; due: boolean }>(
    `SELECT id::text, run_at <= now() AS due FROM mta_spool WHERE id IN (:ids)`,
    { replacements: { ids: [heldByIt, retryLater, otherProvider] }, type: QueryTypes.SELECT },
  );
  assert.equal(Object.fromEntries(due.map((row) => [row.id, row.due])), {
    [heldByIt]: true,
    [retryLater]: false,
    [otherProvider]: false,
  });
  assert.not.ok(
    (await active()).some((a) => a.id === gmail.id),
    'no longer in force',
  );
  const [{ until }] = await ctx.db.sequelize.query<{ until: Date }>(
    `SELECT until FROM mta_provider_suspensions WHERE id = :id`,
    { replacements: { id: gmail.id }, type: QueryTypes.SELECT },
  );
  assert.ok(until.getTime() <= Date.now(), 'its end is now');
  const twice = await ctx.app.inject({ method: 'DELETE', url: `/platform/reactions/${gmail.id}`, headers: admin });
  assertErrorBody(twice, 404, 'NOT_FOUND');
  const byMember = await ctx.app.inject({ method: 'DELETE', url: `/platform/reactions/${gmail.id}`, headers: member });
  assert.is(byMember.statusCode, 403);

  // Microsoft's 5.7.515 pauses the tenant: that is lifted by resuming the tenant, and the answer says so.
  const rules = await loadReactionRules(ctx.db.sql);
  const pause = reactionTo(
    rules,
    { providerKey: 'microsoft', domain: 'outlook.test', tenantId, emailId: null },
    reply('550 5.7.515 Access denied, sending domain does not meet the required authentication level'),
  )!;
  const statement = recordReactionStatement(pause);
  await ctx.db.sql.pool.query(statement.text, statement.values);
  const paused = (await active()).find((a) => a.kind === 'pause_tenant')!;
  const refused = await ctx.app.inject({ method: 'DELETE', url: `/platform/reactions/${paused.id}`, headers: admin });
  assertErrorBody(refused, 409, 'CONFLICT');
  assert.match(refused.json().message, `POST /tenants/${tenantId}/resume-sending`);
});

test("a loop's own copy of a reaction it drew stands until its batch could record it, then follows the database", async () => {
  const lines: string[] = [];
  const log = {
    info: (_: object, line: string) => lines.push(line),
    warn: (_: object, line: string) => lines.push(line),
  };
  // The shaper's own clock: the test moves it on instead of sleeping through the 5 s a batch has to record.
  let clock = Date.now();
  const shaper = new Shaper({
    sql: ctx.db.sql,
    log: log as never,
    session: { ehloName: 'node.test' },
    wakeAt: () => {},
    now: () => clock,
  });
  await shaper.refresh();
  assert.is(shaper.suspendedUntil('google', 'gmail.test'), 0, 'the suspension in the database was lifted above');
  const drawn = shaper.react(
    { id: 'row-1', tenantId, emailId: null, domain: 'gmail.test' },
    'google',
    reply('421 4.7.28 [192.0.2.1] Our system has detected an unusual rate of unsolicited mail'),
  );
  assert.is(drawn?.rule.action, 'suspend');
  assert.ok(shaper.suspendedUntil('google', 'gmail.test') > clock, 'applied here at once');
  clock += 4_900;
  await shaper.refresh();
  assert.ok(shaper.suspendedUntil('google', 'gmail.test') > clock, 'kept while its batch may not have recorded it');
  // Its batch never recorded it here (as when an admin lifted it): 5 s on, the database's answer wins.
  clock += 200;
  await shaper.refresh();
  assert.is(shaper.suspendedUntil('google', 'gmail.test'), 0);
});

test('reaction patterns run on RE2: a catastrophic pattern over a 100 k reply answers; what RE2 cannot run is refused or, stored, reported', async () => {
  const post = (payload: object) =>
    ctx.app.inject({ method: 'POST', url: '/platform/reaction-rules', headers: admin, payload });
  const created = await post({
    priority: 1,
    textPattern: '^421 (a+)+$',
    action: 'suspend',
    scope: 'destination',
    minutes: 5,
    description: 'catastrophic for a backtracking engine',
  });
  assert.is(created.statusCode, 201, created.body);
  const rules = await loadReactionRules(ctx.db.sql);
  const at = { providerKey: 'default', domain: 'remote.test', tenantId, emailId: null };
  // A remote server's reply of 100,000 a's and one '!': a backtracking engine never returns from this.
  assert.is(reactionTo(rules, at, reply(`421 ${'a'.repeat(100_000)}!`)), null);
  assert.is(reactionTo(rules, at, reply(`421 ${'a'.repeat(100_000)}`))?.rule.id, created.json().id);

  for (const textPattern of ['(try) \\1', '(?=later)', '(?<!again )later']) {
    const refused = await post({ textPattern, action: 'suspend', minutes: 5, description: 'x' });
    assertErrorBody(refused, 400, 'VALIDATION_FAILED');
    const detail = refused.json().details.find((d: { field: string }) => d.field === 'textPattern');
    assert.match(detail?.message ?? '', /^not a pattern the MTA can run: error parsing regexp: /, refused.body);
    assert.match(refused.json().message, 'RE2 regular expressions');
  }

  // A rule stored before RE2 (here written straight into the table) matches nothing and is reported.
  const [stored] = await ctx.db.sequelize.query<{ id: string }>(
    `INSERT INTO mta_reaction_rules (priority, text_pattern, action, scope, minutes, description)
     VALUES (2, '(?=later)', 'suspend', 'destination', 5, 'stored before RE2') RETURNING id`,
    { type: QueryTypes.SELECT },
  );
  const loaded = await loadReactionRules(ctx.db.sql);
  assert.ok(loaded.some((rule) => rule.id === stored.id));
  assert.is(reactionTo(loaded, at, reply('451 later')), null, 'it matches nothing, and nothing throws');
  const listed = await ctx.app.inject({ method: 'GET', url: '/platform/reactions', headers: admin });
  const shown = listed.json().rules.find((rule: { id: string }) => rule.id === stored.id);
  assert.match(shown.patternProblem, /^error parsing regexp: invalid or unsupported Perl syntax/);
  assert.is(listed.json().rules.find((rule: { id: string }) => rule.id === created.json().id).patternProblem, null);
  const human = await cli.run(['providers']);
  assert.match(human.stdout, 'matches nothing: error parsing regexp');
  await ctx.db.sequelize.query(`DELETE FROM mta_reaction_rules WHERE id IN (:ids)`, {
    replacements: { ids: [stored.id, created.json().id] },
  });
});

test.run();
