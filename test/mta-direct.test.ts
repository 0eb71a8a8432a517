// Direct delivery end to end (issue 28): DELIVERY=direct on a running daemon, mail sent through the
// API goes to the recipients' MX hosts (smtp-server on 127.0.0.x:25, names in the test DNS server)
// through the spool and the per-destination loop. One transaction per destination domain with all its
// RCPTs; DELIVERED in the log; a 451 deferral with its response in the timeline, then delivered on
// the retry; a 550 5.1.1 bounced and suppressed, a 550 5.7.1 policy refusal bounced and not suppressed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MxHost } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, countRows, openWorldDatabase, type SendWorld } from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';
import { parsePrometheusText } from './helpers/prometheus-text.ts';

let mta: MtaFixture;
let xHost: MxHost;
let yHost: MxHost;
let world: SendWorld;
/** RCPTs of late@x.test answered so far: the first gets 451. */
let lateTries = 0;

test.before(async () => {
  mta = await MtaFixture.start();
  xHost = await mta.mxHost(
    { rcpt: (address) => (address === 'late@x.test' && lateTries++ === 0 ? '451 4.7.1 greylisted, try later' : null) },
    undefined,
    ['x.test'],
  );
  yHost = await mta.mxHost(
    {
      rcpt: (address) =>
        address === 'ghost@y.test'
          ? '550 5.1.1 <ghost@y.test>: no such user'
          : address === 'blocked@y.test'
            ? '550 5.7.1 rejected by policy: sender reputation'
            : null,
    },
    undefined,
    ['y.test'],
  );
  world = await mta.seed({ SEND_RETRY_BASE_MS: '300' });
  await mta.startDaemon();
});

test.after(async () => {
  await mta?.close();
});

const send = (to: string[]) => mta.send(to, { subject: `direct to ${to.join(', ')}` });

const logOf = (
  id: string,
): Promise<{ status: string; attempts: number; sentAt: string | null; events: { type: string; data: any }[] }> =>
  mta.log(id);

test('a message to two domains: one transaction per domain with all its RCPTs, DELIVERED per recipient', async () => {
  const id = await send(['a@x.test', 'b@x.test', 'c@y.test']);
  await waitFor('both destinations to have the message', () => xHost.messages.length > 0 && yHost.messages.length > 0, {
    timeoutMs: 30_000,
  });
  await waitFor('the log to say DELIVERED', async () => (await logOf(id)).status === 'DELIVERED', {
    timeoutMs: 15_000,
  });
  assert.is(xHost.messages.length, 1, 'x.test got one transaction');
  assert.equal(xHost.messages[0].to.sort(), ['a@x.test', 'b@x.test']);
  assert.equal(yHost.messages[0].to, ['c@y.test']);
  assert.is(xHost.messages[0].helo, 'mta.acme.test');
  assert.match(xHost.messages[0].raw.toString(), /^DKIM-Signature:/im);
  await waitFor(
    'a delivered event per recipient',
    async () => (await logOf(id)).events.filter((e) => e.type === 'delivered').length === 3,
    { timeoutMs: 15_000 },
  );
  const delivered = (await logOf(id)).events.filter((e) => e.type === 'delivered');
  assert.equal(delivered.flatMap((e) => e.data.recipients).sort(), ['a@x.test', 'b@x.test', 'c@y.test']);
  // The MTA thread counted them for this node's /metrics (docs/metrics.md), under the provider it matched.
  await waitFor('the MTA thread’s counts in /metrics', async () => {
    const exposition = parsePrometheusText(await (await fetch(`${world.url}/metrics`)).text());
    const direct = { outcome: 'delivered', route: 'direct', provider: 'default' };
    return (
      exposition.value('svc_delivery_outcomes_total', direct) === 3 &&
      exposition.types.get('svc_mta_connections') === 'gauge'
    );
  });
  const db = await openWorldDatabase(world);
  try {
    assert.is(
      await countRows(
        db,
        // What the spool row kept for the log (the headers sent, the attempt) came with the delivery.
        `SELECT count(*) FROM email_logs WHERE id = :id AND status = 'DELIVERED' AND sent_at IS NOT NULL
            AND attempts = 1 AND sent_headers->>'Subject' = 'direct to a@x.test, b@x.test, c@y.test'`,
        { id },
      ),
      1,
    );
    assert.is(await countRows(db, 'SELECT count(*) FROM mta_spool'), 0, 'finished rows leave the spool');
    const events = await countRows(
      db,
      `SELECT count(*) FROM events WHERE email_id = :id AND type = 'email.delivered'`,
      {
        id,
      },
    );
    assert.is(events, 3, 'an event (and webhook) per recipient');
  } finally {
    await db.close();
  }
});

test('451: deferred with the response in the timeline, then delivered on the retry', async () => {
  const id = await send(['late@x.test']);
  await waitFor('the log to say DELIVERED', async () => (await logOf(id)).status === 'DELIVERED', {
    timeoutMs: 30_000,
  });
  const log = await logOf(id);
  const deferred = log.events.find((e) => e.type === 'deferred');
  assert.ok(deferred, JSON.stringify(log.events));
  assert.match(deferred!.data.response, /^451 4\.7\.1 greylisted/);
  assert.equal(deferred!.data.recipients, ['late@x.test']);
  assert.ok(deferred!.data.retryAt);
  assert.is(lateTries, 2, 'tried twice');
  // One attempt of the send job (the MTA's tries are the spool row's), its time written once.
  assert.is(log.attempts, 1);
  assert.ok(log.sentAt);
  assert.ok(xHost.messages.some((m) => m.to.includes('late@x.test')));
});

test('550 5.1.1: bounced and suppressed; 550 5.7.1: bounced, not suppressed', async () => {
  const ghost = await send(['ghost@y.test']);
  const blocked = await send(['blocked@y.test']);
  await waitFor('ghost to bounce', async () => (await logOf(ghost)).status === 'BOUNCED', { timeoutMs: 30_000 });
  await waitFor('blocked to bounce', async () => (await logOf(blocked)).status === 'BOUNCED', { timeoutMs: 30_000 });
  const bounce = (await logOf(ghost)).events.find((e) => e.type === 'bounced');
  assert.is(bounce?.data.bounceType, 'hard');
  assert.match(bounce?.data.diagnostic, /5\.1\.1/);
  assert.is((await logOf(blocked)).events.find((e) => e.type === 'bounced')?.data.bounceType, 'policy');
  // A bounce writes what the spool row kept for the log too.
  for (const id of [ghost, blocked]) {
    const log = await logOf(id);
    assert.is(log.attempts, 1);
    assert.ok(log.sentAt, id);
  }
  // Through the API: with the embedded database the daemon holds it, and a second opener would not see its writes.
  const suppressions = await api(world, 'GET', '/suppressions');
  assert.is(suppressions.status, 200, JSON.stringify(suppressions.body));
  assert.equal(
    suppressions.body.data.map((s: { email: string }) => s.email),
    ['ghost@y.test'],
  );
});

test.run();
