// A local DNS fault never bounces or suppresses anyone (issue 49 §3), on a running daemon with
// DELIVERY=direct against the project's DNS server: while it answers NXDOMAIN for everything (the
// canary too), mail to a real-looking domain is deferred with a reason that names the resolver, retried,
// never bounced nor suppressed, and the queue view and /health/queues show the fault once per node;
// once the resolver answers, the same message is delivered. With a healthy resolver, a domain's
// NXDOMAIN bounces (and suppresses) only when a look-up DNS_NXDOMAIN_CONFIRM_MS later says it again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MxHost } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, type SendWorld } from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';
import type { InProcessCli } from './helpers/svc-inprocess.ts';

let mta: MtaFixture;
let mx: MxHost;
let world: SendWorld;
let adminToken: string;
let cli: InProcessCli;

test.before(async () => {
  // Nothing but the sender's DMARC record (send-time sender rules): every other name is NXDOMAIN.
  mta = await MtaFixture.start();
  mx = await mta.mxHost();
  world = await mta.seed({
    DNS_CANARY_NAMES: 'canary.test',
    DNS_NXDOMAIN_CONFIRM_MS: '1500',
    SEND_RETRY_BASE_MS: '300',
  });
  adminToken = await mta.adminToken();
  await mta.startDaemon();
  cli = await mta.cli(adminToken);
});

test.after(async () => {
  await mta?.close();
});

const send = (to: string) => mta.send(to);
const logOf = (id: string): Promise<{ status: string; events: { type: string; data: any }[] }> => mta.log(id);

async function asAdmin(path: string): Promise<any> {
  const res = await fetch(`${world.url}${path}`, { headers: { authorization: `Bearer ${adminToken}` } });
  const body = await res.json();
  assert.is(res.status, 200, JSON.stringify(body));
  return body;
}

const outboundHealth = () => mta.outboundHealth(adminToken);

async function suppressed(): Promise<string[]> {
  const res = await api(world, 'GET', '/suppressions');
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body.data.map((s: { email: string }) => s.email);
}

let faulty: string;

test('a resolver answering NXDOMAIN for everything: deferred with the resolver named, never bounced nor suppressed', async () => {
  faulty = await send('someone@gmail.test');
  const deferrals = async () => (await logOf(faulty)).events.filter((e) => e.type === 'deferred');
  // Three tries, the last well past DNS_NXDOMAIN_CONFIRM_MS: an unhealthy resolver's NXDOMAIN is never confirmed.
  await waitFor('three deferrals', async () => (await deferrals()).length >= 3, { timeoutMs: 30_000 });
  const log = await logOf(faulty);
  assert.not.ok(['BOUNCED', 'FAILED', 'DELIVERED'].includes(log.status), log.status);
  for (const deferral of await deferrals()) {
    assert.match(deferral.data.response, /^resolver unhealthy: MX of canary\.test: NXDOMAIN/);
    assert.match(deferral.data.response, /gmail\.test does not exist \(NXDOMAIN\): not believed/);
  }
  assert.not.ok(
    log.events.some((e) => e.type === 'bounced'),
    JSON.stringify(log.events),
  );
  assert.equal(await suppressed(), []);

  // The queue view: one resolver fault for the node, and the destination's reply naming it.
  const queue = await asAdmin('/platform/queue');
  assert.is(queue.resolver.length, 1, JSON.stringify(queue.resolver));
  const [node] = queue.resolver;
  assert.is(node.healthy, false);
  assert.equal(node.canaries, ['canary.test']);
  assert.match(node.lastError, /^MX of canary\.test: NXDOMAIN$/);
  assert.ok(Date.parse(node.since) <= Date.parse(node.checkedAt));
  const gmail = queue.data.find((d: { domain: string }) => d.domain === 'gmail.test');
  assert.ok(gmail, JSON.stringify(queue.data));
  assert.match(gmail.lastResponse, /^resolver unhealthy/);
  // /health/queues (the dashboard's panel) names the node too.
  assert.equal(
    (await outboundHealth()).resolverUnhealthy.map((n: { node: string }) => n.node),
    [node.node],
  );
  // `svc queue` says it once, above the table.
  const listed = await cli.run(['queue']);
  assert.is(listed.code, 0, listed.stdout + listed.stderr);
  assert.match(
    listed.stdout,
    /resolver unhealthy on \S+ for .+: MX of canary\.test: NXDOMAIN — mail is deferred, not bounced/,
  );
  // And the daemon's log says it once, as it happened.
  assert.match(mta.daemon!.output(), /resolver unhealthy: mail is deferred/);
  assert.is(mx.messages.length, 0);
});

test('the resolver answers again: the same message is delivered and the node shows healthy', async () => {
  mta.dns.zone.mx.set('canary.test', [{ exchange: 'mx.canary.test', priority: 10 }]);
  mta.route('gmail.test', 'mx.gmail.test', mx.address);
  // The next try is on the backoff; the admin's retry makes it due now.
  const retried = await fetch(`${world.url}/platform/queue/gmail.test/retry`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}` },
  });
  assert.ok([200, 404].includes(retried.status), String(retried.status));
  await waitFor('the message to be delivered', async () => (await logOf(faulty)).status === 'DELIVERED', {
    timeoutMs: 30_000,
  });
  assert.equal(mx.messages.at(-1)?.to, ['someone@gmail.test']);
  await waitFor(
    'the node to show a healthy resolver',
    async () => (await asAdmin('/platform/queue')).resolver[0]?.healthy === true,
  );
  const [node] = (await asAdmin('/platform/queue')).resolver;
  assert.match(node.lastError, /canary\.test: NXDOMAIN/, 'what the fault was stays readable');
  assert.equal(await suppressed(), []);
});

test('a healthy resolver: NXDOMAIN bounces and suppresses only once a later look-up confirms it', async () => {
  const id = await send('nobody@gone.test');
  await waitFor('the bounce', async () => (await logOf(id)).status === 'BOUNCED', { timeoutMs: 30_000 });
  const log = await logOf(id);
  const deferred = log.events.filter((e) => e.type === 'deferred');
  assert.ok(deferred.length >= 1, JSON.stringify(log.events));
  assert.match(
    deferred[0].data.response,
    /^DNS: gone\.test does not exist \(NXDOMAIN\), first seen .*; believed only if/,
  );
  const bounce = log.events.find((e) => e.type === 'bounced');
  assert.match(bounce?.data.diagnostic, /^550 5\.1\.2 gone\.test does not exist \(NXDOMAIN\)/);
  assert.equal(await suppressed(), ['nobody@gone.test']);
});

test.run();
