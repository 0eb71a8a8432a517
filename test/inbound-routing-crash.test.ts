// kill -9 between the SMTP 250 and the webhook's 2xx loses nothing (issue 52 §2): the real daemon
// (child process, real worker threads, its inbound listener) takes a routed message from swaks; the
// webhook receiver holds the delivery unanswered; the daemon is SIGKILLed while it waits and started
// again on the same database. The delivery's lease runs out, the webhook worker delivers again, the
// receiver answers 200 and the message ends `delivered`, once in the database.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  api,
  countRows,
  killAllDaemons,
  openWorldDatabase,
  seedSendWorld,
  startChildDaemon,
  stopChildDaemon,
  type ChildDaemon,
  type SendWorld,
} from './helpers/send-daemon.ts';
import { freePort, swaks } from './helpers/swaks.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts';
import { waitFor } from './helpers/wait.ts';

let world: SendWorld | null = null;
let dns: TestDnsServer;
let receiver: Receiver;
let daemon: ChildDaemon | null = null;

test.after(async () => {
  killAllDaemons();
  await world?.database.drop();
  await receiver?.close();
  await dns?.close();
});

test('kill -9 while the webhook of a routed message is in flight: after a restart it is delivered', async () => {
  dns = await startDnsServer();
  receiver = await startReceiver();
  const smtpPort = await freePort();
  world = await seedSendWorld({
    SMTP_INBOUND_PORT: String(smtpPort),
    DNS_SERVERS: dns.address,
    WEBHOOKS_ALLOW_PRIVATE: 'true',
    LOG_LEVEL: 'warn',
    // A 10 s lease instead of the webhook queue's 60 s: the rule is the same, the wait shorter.
    JOB_LEASE_MS: '10000',
  });
  daemon = await startChildDaemon(world);
  const endpoint = await api(world, 'POST', '/webhooks/endpoints', { url: receiver.url, events: ['inbound.received'] });
  assert.is(endpoint.status, 201, JSON.stringify(endpoint.body));
  const address = await api(world, 'GET', '/inbound/address');
  const [token, domain] = (address.body.address as string).split('@');
  const route = await api(world, 'POST', '/inbound/routes', {
    address: `${token}+*@${domain}`,
    action: 'webhook',
    endpointId: endpoint.body.id,
  });
  assert.is(route.status, 201, JSON.stringify(route.body));

  // The first attempt is held open: the daemon dies while it waits for the answer.
  let release: (() => void) | null = null;
  receiver.respond = () => new Promise((resolve) => (release = () => resolve({ status: 200 })));
  const run = await swaks(smtpPort, [
    '--from',
    'ann@sender.example',
    '--to',
    `${token}+crash@${domain}`,
    '--header',
    'Subject: survive',
  ]);
  assert.match(run.output, /<-  250 Accepted: routed \(1\)/, run.output);
  await waitFor('the first delivery attempt', () => receiver.requests.length === 1, {
    details: () => daemon!.output(),
  });
  daemon.child.kill('SIGKILL');
  await daemon.exit;
  (release as (() => void) | null)?.();

  const db = await openWorldDatabase(world);
  try {
    const status = async () => {
      const [row] = await db.sequelize.query<{ status: string }>(
        `SELECT status FROM inbound_messages WHERE recipient = :to`,
        { replacements: { to: `${token}+crash@${domain}` }, type: 'SELECT' as never },
      );
      return row?.status;
    };
    assert.is(await status(), 'received', 'committed before the 250, not yet acknowledged');

    receiver.respond = () => ({ status: 200, body: 'ok' });
    daemon = await startChildDaemon(world);
    // The dead worker's lease (10 s here) runs out; the delivery is claimed and sent again.
    await waitFor('the delivery after the restart', async () => (await status()) === 'delivered', {
      timeoutMs: 60_000,
      details: () => daemon!.output(),
    });
    assert.ok(receiver.requests.length >= 2);
    const bodies = receiver.requests.map((r) => JSON.parse(r.rawBody) as { id: string; data: { subject: string } });
    assert.is(new Set(bodies.map((b) => b.id)).size, 1, 'the same event, delivered again');
    assert.is(bodies[1].data.subject, 'survive');
    assert.is(await countRows(db, `SELECT count(*) FROM inbound_messages`), 1);
  } finally {
    await db.close();
  }
  await stopChildDaemon(daemon);
});

test.run();
