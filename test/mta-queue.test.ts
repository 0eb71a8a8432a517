// The outbound queue through a running daemon (DELIVERY=direct) and `svc queue` run in-process against
// it: an MX host that answers 451 keeps mail deferred, and the queue shows it per destination (counts,
// the last response, the next try); `svc queue retry` makes it due and it is delivered once the MX
// accepts; `svc queue hold` keeps a domain's new mail from reaching its MX (while mail to another
// domain is delivered behind it), `svc queue release` delivers it; platform admins only; bad domains 400.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MxHost } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, type SendWorld } from './helpers/send-daemon.ts';
import type { InProcessCli } from './helpers/svc-inprocess.ts';
import { waitFor } from './helpers/wait.ts';

/** Loopback addresses of this file (test/helpers/mx-host.ts): 127.0.0.60–69. */
const Q_MX = '127.0.0.60';
const R_MX = '127.0.0.61';

let mta: MtaFixture;
let qHost: MxHost;
let world: SendWorld;
let cli: InProcessCli;
let outsider: InProcessCli;
let adminToken: string;
let memberToken: string;
/** Until set, q.test's MX answers every RCPT with 451. */
let accepting = false;

test.before(async () => {
  mta = await MtaFixture.start();
  qHost = await mta.mxHost({ rcpt: () => (accepting ? null : '451 4.7.1 greylisted, try later') }, Q_MX, ['q.test']);
  await mta.mxHost({}, R_MX, ['r.test']);
  world = await mta.seed({
    // Deferred mail waits an hour: only `svc queue retry` brings it back within this test.
    SEND_RETRY_BASE_MS: '3600000',
  });
  adminToken = await mta.adminToken();
  memberToken = await mta.adminToken(false);
  await mta.startDaemon();
  cli = await mta.cli(adminToken);
  outsider = await mta.cli(memberToken);
});

test.after(async () => {
  await mta?.close();
});

const send = (to: string) => mta.send(to);

async function statusOf(id: string): Promise<string> {
  const res = await api(world, 'GET', `/emails/logs/${id}`);
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body.status as string;
}

async function queueOf(domain: string): Promise<any> {
  const res = await cli.run(['queue', '--domain', domain, '--json']);
  assert.is(res.code, 0, res.stdout + res.stderr);
  return (res.json as { data: any[] }).data[0] ?? null;
}

test('451: the queue shows the deferred mail per destination with the last response and the next try', async () => {
  const ids = [await send('a@q.test'), await send('b@q.test')];
  await waitFor('both messages to q.test to be deferred', async () => (await queueOf('q.test'))?.deferred === 2, {
    timeoutMs: 30_000,
  });
  const listed = await cli.run(['queue', '--json']);
  assert.is(listed.code, 0, listed.stdout);
  const body = listed.json as any;
  assert.is(body.delivery, 'direct');
  const q = body.data.find((d: { domain: string }) => d.domain === 'q.test');
  assert.equal([q.queued, q.deferred, q.inFlight, q.held, q.stuck], [0, 2, 0, false, false]);
  assert.match(q.lastResponse, /^451 4\.7\.1 greylisted, try later/);
  const nextTry = new Date(q.nextTryAt).getTime() - Date.now();
  assert.ok(nextTry > 10 * 60_000, `the next try is the schedule's, an hour or so away: ${nextTry} ms`);
  assert.is(qHost.messages.length, 0);
  for (const id of ids) assert.not.equal(await statusOf(id), 'DELIVERED');

  const table = await cli.run(['queue']);
  assert.is(table.code, 0, table.stderr);
  assert.match(
    table.stdout,
    /DOMAIN\s+QUEUED\s+DEFERRED\s+IN FLIGHT\s+WAITING\s+OLDEST\s+NEXT TRY\s+STATE\s+LAST RESPONSE/,
  );
  assert.ok(/q\.test\s+0\s+2\s+0\s+0\s+(\d+[dhms] ?){1,2}\s+in (\d+h ?)?\d+m/.test(table.stdout), table.stdout);
  assert.match(table.stdout, '451 4.7.1 greylisted');

  const outbound = await mta.outboundHealth(adminToken);
  assert.is(outbound.deferred, 2);
  assert.ok(outbound.destinations.some((d: { domain: string }) => d.domain === 'q.test'));

  // The MX now accepts: retry brings the deferred mail back at once instead of in an hour.
  accepting = true;
  const retried = await cli.run(['queue', 'retry', 'Q.TEST', '--json']);
  assert.is(retried.code, 0, retried.stdout);
  assert.is((retried.json as any).madeDue, 2);
  assert.is((retried.json as any).destination.domain, 'q.test');
  for (const id of ids)
    await waitFor(`${id} to be DELIVERED`, async () => (await statusOf(id)) === 'DELIVERED', { timeoutMs: 30_000 });
  assert.equal(qHost.messages.flatMap((m) => m.to).sort(), ['a@q.test', 'b@q.test']);
  assert.is(await queueOf('q.test'), null, 'nothing left for q.test');
  const nothing = await cli.run(['queue', 'retry', 'q.test', '--json']);
  assert.is((nothing.json as any).error.status, 404);
});

test('hold: no connection reaches the held MX while mail behind it goes out; release delivers it', async () => {
  const held = await cli.run(['queue', 'hold', 'q.test', '--reason', 'their MX is being migrated', '--json']);
  assert.is(held.code, 0, held.stdout);
  assert.equal(
    [(held.json as any).held, (held.json as any).holdReason, (held.json as any).queued],
    [true, 'their MX is being migrated', 0],
    'a pre-emptive hold: nothing is queued for it yet',
  );
  const connections = qHost.connectionsOpened;
  const heldId = await send('c@q.test');
  const laterId = await send('d@r.test');
  // The loop claimed and delivered the r.test message spooled after the held one: it saw and skipped it.
  await waitFor('the r.test message to be DELIVERED', async () => (await statusOf(laterId)) === 'DELIVERED', {
    timeoutMs: 30_000,
  });
  const waiting = await queueOf('q.test');
  assert.equal([waiting.queued, waiting.deferred, waiting.inFlight, waiting.held], [1, 0, 0, true]);
  assert.is(waiting.lastResponse, null, 'never tried');
  assert.is(qHost.connectionsOpened, connections, 'no connection reached the held destination');
  assert.not.equal(await statusOf(heldId), 'DELIVERED');
  const human = await cli.run(['queue']);
  assert.match(human.stdout, /q\.test\s+1\s+0\s+0\s+.*held \(their MX is being migrated\)/);

  const released = await cli.run(['queue', 'release', 'q.test', '--json']);
  assert.is(released.code, 0, released.stdout);
  assert.is((released.json as any).held, false);
  await waitFor('the held message to be DELIVERED', async () => (await statusOf(heldId)) === 'DELIVERED', {
    timeoutMs: 30_000,
  });
  assert.ok(qHost.messages.some((m) => m.to.includes('c@q.test')));
  const again = await cli.run(['queue', 'release', 'q.test', '--json']);
  assert.equal([(again.json as any).error.status, (again.json as any).error.code], [409, 'NOT_HELD']);
});

test('platform admins only: 403 for an admin who is not one and for an API key; bad domains 400; --watch needs a terminal', async () => {
  const asMember = await outsider.run(['queue', '--json']);
  assert.is(asMember.code, 1, asMember.stdout);
  assert.is((asMember.json as any).error.status, 403);
  const holdAsMember = await outsider.run(['queue', 'hold', 'q.test', '--json']);
  assert.is((holdAsMember.json as any).error.status, 403);
  const withKey = await api(world, 'POST', '/platform/queue/q.test/hold', {});
  assert.is(withKey.status, 403, JSON.stringify(withKey.body));
  assert.is(withKey.body.statusCode, 403);
  assert.is(await queueOf('q.test'), null, 'the refused hold held nothing');

  const watch = await cli.run(['queue', '--watch', '--json']);
  assert.is((watch.json as any).error.code, 'NOT_A_TERMINAL', watch.stdout);
  assert.match((watch.json as any).error.message, 'run `svc queue` without --watch');

  const bad = await cli.run(['queue', 'hold', 'not a domain', '--json']);
  assert.is((bad.json as any).error.status, 400, bad.stdout);
  const res = await fetch(`${world.url}/platform/queue/1.2.3.4/retry`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}` },
  });
  const body = await res.json();
  assert.is(res.status, 400);
  assert.equal([body.code, body.details[0].field], ['VALIDATION_FAILED', 'domain']);
});

test.run();
