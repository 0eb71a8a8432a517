// Statuses that say what happened (issue 49 §4), on a running daemon with DELIVERY=direct and MX hosts
// on loopback: `?sync=true` answers what the recipient's server said — DELIVERED (200), BOUNCED with
// its reply (202), QUEUED with the deferral's reply and next try (202) — never SENT for a message only
// spooled; `svc send --sync` prints it, and `svc logs show` prints each deferral's reason.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MxHost } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, type SendWorld } from './helpers/send-daemon.ts';
import type { InProcessCli } from './helpers/svc-inprocess.ts';

let mta: MtaFixture;
let mx: MxHost;
let world: SendWorld;
let cli: InProcessCli;
/** `svc` as a pipeline runs it: the tenant's API key in the environment. */
const asKey = () => ({ env: { SVC_API_KEY: world.apiKey, SVC_TENANT_ID: world.tenantId } });

test.before(async () => {
  mta = await MtaFixture.start();
  mx = await mta.mxHost(
    {
      rcpt: (address) =>
        address.startsWith('late')
          ? '451 4.7.1 greylisted, try later'
          : address.startsWith('ghost')
            ? '550 5.1.1 <ghost@sync.test>: no such user'
            : null,
    },
    undefined,
    ['sync.test'],
  );
  world = await mta.seed({
    // Deferred mail waits an hour: the deferral stays the latest word in these tests.
    SEND_RETRY_BASE_MS: '3600000',
    // A loaded test machine may take a while to claim and deliver: the bound is not what is tested.
    SYNC_DIRECT_WAIT_MS: '60000',
  });
  await mta.startDaemon();
  cli = await mta.cli();
});

test.after(async () => {
  await mta?.close();
});

const syncSend = (to: string) =>
  api(world, 'POST', '/emails/send?sync=true', {
    from: 'Acme <app@acme.test>',
    to,
    subject: `sync to ${to}`,
    textBody: 'Hello',
  });

test("sync, the MX takes it: 200 DELIVERED once the recipient's server said 250, not SENT at the spool", async () => {
  const res = await syncSend('ada@sync.test');
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.status, 'DELIVERED');
  assert.not.ok(res.body.error);
  assert.ok(
    mx.messages.some((m) => m.to.includes('ada@sync.test')),
    'the MX has it when the answer comes',
  );
  const log = await api(world, 'GET', `/emails/logs/${res.body.id}`);
  assert.is(log.body.status, 'DELIVERED');
});

test("sync, the MX defers: 202 QUEUED with the server's reply and the next try", async () => {
  const res = await syncSend('late@sync.test');
  assert.is(res.status, 202, JSON.stringify(res.body));
  assert.is(res.body.status, 'QUEUED');
  assert.match(res.body.deferred.reason, /^451 4\.7\.1 greylisted/);
  assert.ok(Date.parse(res.body.deferred.retryAt) > Date.now(), res.body.deferred.retryAt);
  assert.match(res.body.message, /deferred/);

  // `svc logs show` prints the deferral's reason (before, only --json had it).
  const shown = await cli.run(['logs', 'show', res.body.id], asKey());
  assert.is(shown.code, 0, shown.stdout + shown.stderr);
  assert.match(shown.stdout, /deferred\s+451 4\.7\.1 greylisted, try later · next try \d{4}-/);
  assert.match(shown.stdout, /spooled/);
});

test('sync, the MX refuses: 202 BOUNCED with its reply', async () => {
  const res = await syncSend('ghost@sync.test');
  assert.is(res.status, 202, JSON.stringify(res.body));
  assert.is(res.body.status, 'BOUNCED');
  assert.match(res.body.error, /550 5\.1\.1/);
});

test('svc send --sync prints what the server said', async () => {
  const delivered = await cli.run(
    ['send', '--to', 'grace@sync.test', '--from', 'app@acme.test', '--subject', 'Hi', '--text', 'Hello', '--sync'],
    asKey(),
  );
  assert.is(delivered.code, 0, delivered.stdout + delivered.stderr);
  assert.match(delivered.stdout, /status\s+DELIVERED/);
  assert.not.match(delivered.stdout, /SENT/);
  const deferred = await cli.run(
    ['send', '--to', 'later@sync.test', '--from', 'app@acme.test', '--subject', 'Hi', '--text', 'Hello', '--sync'],
    asKey(),
  );
  assert.is(deferred.code, 0, deferred.stdout + deferred.stderr);
  assert.match(deferred.stdout, /status\s+QUEUED/);
  assert.match(deferred.stdout, /deferred\s+451 4\.7\.1 greylisted, try later \(next try \d{4}-/);
});

test.run();
