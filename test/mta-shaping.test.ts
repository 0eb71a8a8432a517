// Shaping, reactions and tenant throttles end to end (issue 29, docs/mta.md "Shaping and reactions"):
// DELIVERY=direct on a running daemon, loopback MX hosts (127.0.0.140–144) named in the test DNS server
// like Google's, Yahoo's and Microsoft's, answering with scripted replies. Asserted at the MX hosts
// (connections at once, messages per connection, receipt times) and in the database (spool rows'
// attempts and run_at, suspensions, events), never on how long the test took.
import { writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import { createSql, type Sql } from '../daemon/db/sql.ts';
import type { Database } from '../daemon/db/index.ts';
import { DEFAULT_PROVIDERS, type ProviderShape } from '../daemon/mta/providers.ts';
import { saveProviderRule } from '../daemon/mta/sql/providers.ts';
import { listActiveReactions } from '../daemon/mta/sql/reactions.ts';
import { setTenantThrottle } from '../daemon/mta/sql/throttles.ts';
import type { MxHost, ReceivedMessage } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, openWorldDatabase, seedAnotherTenant, type SendWorld } from './helpers/send-daemon.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { nothingWithin, waitFor } from './helpers/wait.ts';

const GMAIL_RATE_LIMIT =
  '421 4.7.28 [192.0.2.1] Our system has detected an unusual rate of unsolicited mail originating from your IP address. To protect our users from spam, mail sent from your IP address has been temporarily rate limited.';
const YAHOO_TSS04 =
  '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1';
const MICROSOFT_5_7_515 =
  '550 5.7.515 Access denied, sending domain acme.test does not meet the required authentication level.';

let mta: MtaFixture;
let google: MxHost;
let googleAlt: MxHost;
let yahoo: MxHost;
let microsoft: MxHost;
let plain: MxHost;
let receiver: Receiver;
let world: SendWorld;
let db: Database;
let sql: Sql;
let tss04Tries = 0;
/** Tenants throttled before the daemon starts (so the loop knows from its first claim). */
let perSecond: { tenantId: string; apiKey: string };
let perHour: { tenantId: string; apiKey: string };

const slowData = () => new Promise<null>((resolve) => setTimeout(() => resolve(null), 40));

test.before(async () => {
  mta = await MtaFixture.start();
  google = await mta.mxHost(
    { rcpt: (address) => (address.startsWith('ratelimited@') ? GMAIL_RATE_LIMIT : null), data: slowData },
    '127.0.0.140',
  );
  googleAlt = await mta.mxHost({}, '127.0.0.141');
  yahoo = await mta.mxHost(
    { rcpt: (address) => (address.startsWith('tss04@') && tss04Tries++ === 0 ? YAHOO_TSS04 : null) },
    '127.0.0.142',
  );
  microsoft = await mta.mxHost(
    { rcpt: (address) => (address.startsWith('auth@') ? MICROSOFT_5_7_515 : null) },
    '127.0.0.143',
  );
  plain = await mta.mxHost({}, '127.0.0.144', ['p1.test']);
  for (const domain of ['g1.test', 'g2.test', 'g3.test', 'g5.test'])
    mta.route(domain, 'aspmx.l.google.com', google.address);
  mta.route('g4.test', 'alt1.aspmx.l.google.com', googleAlt.address);
  mta.route('y1.test', 'mta5.am0.yahoodns.net', yahoo.address);
  mta.route('m1.test', 'm1-test.mail.protection.outlook.com', microsoft.address);
  receiver = await startReceiver();
  mta.closeWith(receiver);
  world = await mta.seed({ SEND_RETRY_BASE_MS: '300' });
  assert.ok(world.database.url, 'these tests read the database while the daemon runs: set DATABASE_URL');
  sql = createSql(world.database.url!, { max: 2, embedded: false });
  perSecond = await seedAnotherTenant(world);
  perHour = await seedAnotherTenant(world);
  await setTenantThrottle(sql, { tenantId: perSecond.tenantId, messagesPerSecond: 2, messagesPerHour: null });
  await setTenantThrottle(sql, { tenantId: perHour.tenantId, messagesPerSecond: null, messagesPerHour: 3 });
  await mta.startDaemon();
  db = await openWorldDatabase(world);
  const hook = await api(world, 'POST', '/webhooks/endpoints', { url: receiver.url, events: ['delivery.reaction'] });
  assert.is(hook.status, 201, JSON.stringify(hook.body));
});

test.after(async () => {
  await mta?.close();
  // The daemon's log, for a failure on a loaded machine: MTA_SHAPING_DAEMON_LOG=/tmp/daemon.log.
  if (mta?.daemon && process.env.MTA_SHAPING_DAEMON_LOG)
    writeFileSync(process.env.MTA_SHAPING_DAEMON_LOG, mta.daemon.output());
  await sql?.close();
  await db?.close();
  await world?.database.drop();
});

const send = (to: string, as: Pick<SendWorld, 'apiKey'> = world) => mta.send([to], {}, as.apiKey);

async function sendAll(addresses: string[], as: Pick<SendWorld, 'apiKey'> = world): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < addresses.length; i += 10)
    ids.push(...(await Promise.all(addresses.slice(i, i + 10).map((to) => send(to, as)))));
  return ids;
}

async function rows<T extends object>(query: string, replacements: Record<string, unknown> = {}): Promise<T[]> {
  return db.sequelize.query<T>(query, { replacements, type: QueryTypes.SELECT });
}

function perConnection(messages: ReceivedMessage[]): number[] {
  const counts = new Map<string, number>();
  for (const message of messages) counts.set(message.connection, (counts.get(message.connection) ?? 0) + 1);
  return [...counts.values()];
}

function gaps(times: number[]): number[] {
  const sorted = [...times].sort((a, b) => a - b);
  return sorted.slice(1).map((time, i) => time - sorted[i]);
}

const shipped = (key: string) => DEFAULT_PROVIDERS.find((provider) => provider.key === key)!;

/** Saves a provider's rule and waits until the daemon's loop says it uses it (NOTIFY, then a reload). */
async function editProvider(rule: ProviderShape): Promise<void> {
  const said = () => mta.daemon!.output().split(`"providers":["${rule.key}"]`).length - 1;
  const before = said();
  await saveProviderRule(sql, rule);
  await waitFor(`the loop's reload of ${rule.key}`, () => said() > before);
}

test('Google: three destinations share 5 connections at most, 50 messages per connection at most', async () => {
  const addresses = Array.from({ length: 120 }, (_, i) => `u${i}@g${1 + (i % 3)}.test`);
  await sendAll(addresses);
  await waitFor('120 messages at the Google MX host', () => google.messages.length === 120, { timeoutMs: 60_000 });
  // Unshaped, each destination would have its own pool of 10: up to 30 at once with 40 ms DATA answers.
  assert.ok(google.maxConcurrentConnections <= 5, `at most 5 at once, saw ${google.maxConcurrentConnections}`);
  assert.ok(google.maxConcurrentConnections >= 2, 'the load did use several connections');
  assert.ok(Math.max(...perConnection(google.messages)) <= 50, JSON.stringify(perConnection(google.messages)));
  const domains = new Set(google.messages.map((m) => m.to[0].split('@')[1]));
  assert.equal([...domains].sort(), ['g1.test', 'g2.test', 'g3.test']);
});

test("an admin's edit reaches the loop: 1 connection, 20 messages per connection", async () => {
  await editProvider({ ...shipped('google'), maxConnections: 1, maxMessagesPerConnection: 20 });
  await sendAll(Array.from({ length: 45 }, (_, i) => `v${i}@g4.test`));
  await waitFor('45 messages at the second Google MX host', () => googleAlt.messages.length === 45, {
    timeoutMs: 60_000,
  });
  assert.is(googleAlt.maxConcurrentConnections, 1);
  const counts = perConnection(googleAlt.messages);
  assert.ok(Math.max(...counts) <= 20, JSON.stringify(counts));
  assert.ok(counts.length >= 3, JSON.stringify(counts));
  await editProvider(shipped('google'));
});

test('Gmail 421 4.7.28 suspends Google: no connection during the suspension, rows released without an attempt', async () => {
  const limited = await send('ratelimited@g1.test');
  await waitFor(
    'the suspension of google',
    async () =>
      (await rows(`SELECT 1 FROM mta_provider_suspensions WHERE provider_key = 'google' AND kind = 'suspend'`))
        .length === 1,
  );
  const [suspension] = await rows<{ until: Date; domain: string | null; reason: string }>(
    `SELECT until, domain, reason FROM mta_provider_suspensions WHERE provider_key = 'google'`,
  );
  assert.is(suspension.domain, null, 'every destination of the provider');
  assert.match(suspension.reason, /^421 4\.7\.28/);
  const until = new Date(suspension.until).getTime();
  assert.ok(until > Date.now() + 14 * 60_000, 'for the 15 minutes of the shipped rule');

  const opened = google.connectionsOpened + googleAlt.connectionsOpened;
  const received = google.messages.length + googleAlt.messages.length;
  const spoolRow = async (id: string) =>
    (
      await rows<{ state: string; attempts: number; run_at: Date; lease_owner: string | null }>(
        `SELECT state, attempts, run_at, lease_owner FROM mta_spool WHERE email_id = :id`,
        { id },
      )
    )[0];
  // A Google destination this loop has no lane for yet: claimed, routed, and given back until the
  // suspension ends, not attempted.
  const fresh = await send('fresh@g5.test');
  await waitFor('the new destination to be given back until the suspension ends', async () => {
    const row = await spoolRow(fresh);
    return row !== undefined && row.lease_owner === null && new Date(row.run_at).getTime() >= until - 1_000;
  });
  // A destination whose lane knows it is suspended: the claim skips it.
  const skipped = await send('skipped@g2.test');
  await nothingWithin(2_000); // no connection to a Google host while these rows (and the 421's retry) are due
  assert.is(google.connectionsOpened + googleAlt.connectionsOpened, opened, 'no connection during the suspension');
  assert.is(google.messages.length + googleAlt.messages.length, received);
  const freshRow = await spoolRow(fresh);
  assert.is(freshRow.state, 'queued');
  assert.is(freshRow.attempts, 0);
  const skippedRow = await spoolRow(skipped);
  assert.is(skippedRow.attempts, 0);
  assert.is(skippedRow.lease_owner, null);
  const limitedRow = await spoolRow(limited);
  assert.is(limitedRow.state, 'deferred');
  assert.is(limitedRow.attempts, 1, 'the 421 was the one attempt');
  assert.is(limitedRow.lease_owner, null);

  const [event] = await rows<{ data: Record<string, unknown>; email_id: string }>(
    `SELECT data, email_id FROM events WHERE tenant_id = :tenantId AND type = 'delivery.reaction'`,
    { tenantId: world.tenantId },
  );
  assert.is(event.email_id, limited);
  assert.is(event.data.provider, 'google');
  assert.is(event.data.action, 'suspend');
  assert.match(String(event.data.reply), /^421 4\.7\.28/);
  await waitFor('the webhook', () => receiver.requests.some((r) => JSON.parse(r.rawBody).type === 'delivery.reaction'));
  const payload = JSON.parse(
    receiver.requests.find((r) => JSON.parse(r.rawBody).type === 'delivery.reaction')!.rawBody,
  );
  assert.is(payload.data.provider, 'google');
  assert.is(payload.tenantId, world.tenantId);

  const active = await listActiveReactions(sql);
  assert.ok(active.some((reaction) => reaction.providerKey === 'google' && reaction.kind === 'suspend'));
});

test("Yahoo TSS04 halves Yahoo's rate for the rule's 30 minutes", async () => {
  await editProvider({ ...shipped('yahoo'), messagesPerMinute: 60 });
  await send('tss04@y1.test');
  await waitFor(
    'the slow-down of yahoo',
    async () =>
      (
        await rows(
          `SELECT 1 FROM mta_provider_suspensions WHERE provider_key = 'yahoo' AND kind = 'slow' AND factor = 0.5`,
        )
      ).length === 1,
  );
  await waitFor('the TSS04 message delivered on its retry', () => yahoo.messages.length === 1, { timeoutMs: 30_000 });
  await sendAll(['y1@y1.test', 'y2@y1.test', 'y3@y1.test', 'y4@y1.test']);
  await waitFor('4 more messages at the Yahoo MX host', () => yahoo.messages.length === 5, { timeoutMs: 30_000 });
  // 60 a minute is one a second; halved, one every 2 s: the 4 new ones span 6 s (3 s unhalved). Attempts
  // are paced; a receipt also carries its attempt's latency, hence the slack.
  const times = yahoo.messages.filter((m) => /^y\d@/.test(m.to[0])).map((m) => m.receivedAt);
  assert.ok(Math.max(...times) - Math.min(...times) >= 5_000, JSON.stringify(gaps(times)));
});

test("a tenant's 2 messages a second: 20 messages spread over 9.5 s, another tenant's mail not held", async () => {
  const throttled = sendAll(
    Array.from({ length: 20 }, (_, i) => `a${i}@p1.test`),
    perSecond,
  );
  const free = sendAll(Array.from({ length: 5 }, (_, i) => `b${i}@p1.test`));
  await Promise.all([throttled, free]);
  await waitFor('25 messages at the plain MX host', () => plain.messages.length === 25, { timeoutMs: 60_000 });
  const times = (prefix: string) =>
    plain.messages
      .filter((m) => m.to[0].startsWith(prefix))
      .map((m) => m.receivedAt)
      .sort((a, b) => a - b);
  const a = times('a');
  const b = times('b');
  // Attempts start 500 ms apart (19 gaps: 9.5 s). A receipt also carries its attempt's latency (the
  // first opened the connection; a loaded machine delays one and not the next), so single gaps vary:
  // the span is asserted with that slack, and no five messages within 1.5 s anywhere (unthrottled,
  // all twenty arrive within a few hundred ms).
  assert.ok(a.at(-1)! - a[0] >= 8_500, `20 messages at 2 a second span ~9.5 s, saw ${a.at(-1)! - a[0]} ms`);
  // The first receipt is left out of the windows: its attempt also opened the connection, and on a loaded
  // box it arrived with the second (gaps 0, 379, 512, 491: four within 1.4 s though attempts were paced).
  const fives = a.slice(5).map((time, i) => time - a[i + 1]);
  assert.ok(Math.min(...fives) >= 1_500, JSON.stringify(gaps(a)));
  assert.ok(b.at(-1)! < a[9], "the other tenant's 5 arrived before the throttled tenant's 10th");
});

test("a tenant's hourly throttle: counted in the database, the rest waits for the next hour", async () => {
  const ids = await sendAll(
    Array.from({ length: 5 }, (_, i) => `h${i}@p1.test`),
    perHour,
  );
  const held = async () =>
    rows<{ run_at: Date; attempts: number }>(
      `SELECT run_at, attempts FROM mta_spool WHERE email_id IN (:ids) AND lease_owner IS NULL AND run_at > now() + interval '1 second'`,
      { ids },
    );
  await waitFor('3 delivered and 2 held for the next hour', async () => {
    const delivered = plain.messages.filter((m) => m.to[0].startsWith('h')).length;
    return delivered === 3 && (await held()).length === 2;
  });
  const nextHour = Math.ceil(Date.now() / 3_600_000) * 3_600_000;
  for (const row of await held()) {
    assert.is(row.attempts, 0);
    assert.ok(new Date(row.run_at).getTime() >= nextHour, 'not before the next clock hour');
  }
  const [count] = await rows<{ sent: number }>(`SELECT sent FROM mta_tenant_hourly WHERE tenant_id = :id`, {
    id: perHour.tenantId,
  });
  assert.is(count.sent, 3);
  // A wait of ours (issue 49 §4): the held logs say so, with the reason and when they go; not deferred.
  const heldLogs = [];
  for (const id of ids) {
    const log = (await api({ ...world, apiKey: perHour.apiKey }, 'GET', `/emails/logs/${id}`)).body;
    if (log.status !== 'DELIVERED') heldLogs.push(log);
  }
  assert.is(heldLogs.length, 2);
  for (const log of heldLogs) {
    assert.is(log.status, 'QUEUED');
    assert.not.ok(
      log.events.some((e: { type: string }) => e.type === 'deferred'),
      JSON.stringify(log.events),
    );
    assert.is(log.waiting?.kind, 'shaping', JSON.stringify(log.events));
    assert.is(log.waiting.reason, "the tenant's hourly throttle is reached");
    assert.ok(Date.parse(log.waiting.until) >= nextHour, log.waiting.until);
  }
  const [spooled] = await rows<{ n: number }>(
    `SELECT count(*)::int AS n FROM mta_spool WHERE email_id IN (:ids) AND wait_reason = 'the tenant''s hourly throttle is reached'`,
    { ids },
  );
  assert.is(spooled.n, 2, 'the reason is kept on the rows (the queue view counts them as waiting)');
  // The logs list says it beside the status too.
  const listed = await api({ ...world, apiKey: perHour.apiKey }, 'GET', '/emails/logs?status=QUEUED&limit=100');
  assert.is(listed.status, 200, JSON.stringify(listed.body));
  const waitingListed = listed.body.data.filter((l: { waiting?: unknown }) => l.waiting);
  assert.equal(waitingListed.map((l: { id: string }) => l.id).sort(), heldLogs.map((l) => l.id).sort());
  for (const l of waitingListed) {
    assert.is(l.waiting.kind, 'shaping');
    assert.is(l.waiting.reason, "the tenant's hourly throttle is reached");
  }
});

test('Microsoft 5.7.515 pauses the tenant: new sends refused, the reaction listed while the pause lasts', async () => {
  const id = await send('auth@m1.test');
  await waitFor(
    'the tenant to be paused',
    async () =>
      (await rows(`SELECT 1 FROM tenants WHERE id = :id AND sending_paused_at IS NOT NULL`, { id: world.tenantId }))
        .length === 1,
  );
  const [tenant] = await rows<{ sending_paused_reason: string }>(
    `SELECT sending_paused_reason FROM tenants WHERE id = :id`,
    { id: world.tenantId },
  );
  assert.match(tenant.sending_paused_reason, /5\.7\.515/);
  const refused = await api(world, 'POST', '/emails/send', {
    from: 'app@acme.test',
    to: ['x@p1.test'],
    subject: 'paused',
    textBody: 'no',
  });
  assert.is(refused.status, 403);
  assert.is(refused.body.error?.code ?? refused.body.code, 'SENDING_PAUSED', JSON.stringify(refused.body));
  const reactions = await listActiveReactions(sql);
  const pause = reactions.find((reaction) => reaction.kind === 'pause_tenant');
  assert.ok(pause, JSON.stringify(reactions));
  assert.is(pause!.tenantId, world.tenantId);
  assert.is(pause!.providerKey, 'microsoft');
  await waitFor('the message to bounce (policy, not suppressed)', async () => {
    const log = await api(world, 'GET', `/emails/logs/${id}`);
    return log.body.status === 'BOUNCED';
  });
});

test.run();
