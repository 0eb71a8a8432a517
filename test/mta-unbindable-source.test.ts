// A source address this node cannot bind (issue 48 §5): a running daemon with DELIVERY=direct, a pool of
// a loopback address (127.0.0.150, bindable) and 10.254.254.254 (on no interface of this host; written
// straight into the table, as another node would have added it). Mail leaves from the bindable address
// only, and the unbindable one is an operator alert in GET /platform/queue and `svc queue` instead of
// a row retrying quietly with `bind EADDRNOTAVAIL` for five days. With no bindable address left in the
// pool, the rows are deferred saying which address cannot be bound on which node.
import { hostname } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { startMxHost, type MxHost } from './helpers/mx-host.ts';
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
  publishSenderDmarc,
  signInAdmin,
} from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';
import { Admin } from '../daemon/modules/auth/model.ts';
import { hashPassword } from '../daemon/modules/auth/passwords.ts';

const MX_ADDRESS = '127.0.0.151';
const BINDABLE = '127.0.0.150';
const UNBINDABLE = '10.254.254.254';
const ADMIN_PASSWORD = 'unbindable-admin-password-1';

let dns: TestDnsServer;
let mx: MxHost;
let world: SendWorld;
let daemon: ChildDaemon;
let adminToken: string;

test.before(async () => {
  dns = await startDnsServer();
  publishSenderDmarc(dns);
  mx = await startMxHost({}, MX_ADDRESS);
  dns.zone.mx.set('far.test', [{ exchange: 'mx.far.test', priority: 10 }]);
  dns.zone.a.set('mx.far.test', [MX_ADDRESS]);
  world = await seedSendWorld({
    DELIVERY: 'direct',
    DNS_SERVERS: dns.address,
    EHLO_NAME: 'node.acme.test',
    SEND_RETRY_BASE_MS: '60000',
  });
  const db = await openWorldDatabase(world);
  try {
    await Admin.create({
      email: 'unbindable@example.test',
      passwordHash: await hashPassword(ADMIN_PASSWORD),
      isPlatformAdmin: true,
      emailVerifiedAt: new Date(),
    });
  } finally {
    await db.close();
  }
  daemon = await startChildDaemon(world);
  adminToken = await signInAdmin(world, 'unbindable@example.test', ADMIN_PASSWORD);
});

test.after(async () => {
  if (daemon) await stopChildDaemon(daemon);
  killAllDaemons();
  await Promise.all([mx?.close(), dns?.close()]);
});

/** A platform admin's call on the daemon. */
function admin(method: string, path: string, body?: unknown): ReturnType<typeof api> {
  return api(world, method, path, body, adminToken);
}

async function send(to: string): Promise<string> {
  const res = await api(world, 'POST', '/emails/send', {
    from: 'Acme <app@acme.test>',
    to,
    subject: `to ${to}`,
    textBody: 'Hello',
  });
  assert.is(res.status, 202, JSON.stringify(res.body));
  return res.body.id as string;
}

test('mail leaves from the pool address that binds; the one that does not is an alert in the queue view', async () => {
  const created = await admin('POST', '/platform/ip-pools', {
    name: 'half-real',
    addresses: [{ ip: BINDABLE, ehloName: 'out.acme.test', warmup: false }],
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const poolId = created.body.id as string;
  const db = await openWorldDatabase(world);
  try {
    await db.sequelize.query(
      `INSERT INTO ip_pool_addresses (pool_id, ip, ehlo_name) VALUES (:poolId, :ip, 'gone.acme.test')`,
      { replacements: { poolId, ip: UNBINDABLE } },
    );
  } finally {
    await db.close();
  }
  const assigned = await admin('POST', `/platform/ip-pools/${poolId}/assignments`, { tenantId: world.tenantId });
  assert.is(assigned.status, 201, JSON.stringify(assigned.body));

  const ids = await Promise.all([1, 2, 3, 4].map((n) => send(`user${n}@far.test`)));
  await waitFor('four messages at the MX', () => mx.messages.length >= 4, { timeoutMs: 60_000 });
  assert.equal(
    [...new Set(mx.messages.map((message) => message.remoteAddress.replace(/^::ffff:/, '')))],
    [BINDABLE],
    'every message left from the address that binds',
  );
  await waitFor(
    'the logs to say DELIVERED',
    async () => {
      const logs = await Promise.all(ids.map((id) => api(world, 'GET', `/emails/logs/${id}`)));
      return logs.every((log) => log.body.status === 'DELIVERED');
    },
    { timeoutMs: 30_000 },
  );
  const queue = await admin('GET', '/platform/queue');
  assert.is(queue.status, 200, JSON.stringify(queue.body));
  assert.equal(
    queue.body.sourceFaults.map((fault: { node: string; ip: string; reason: string }) => [
      fault.node,
      fault.ip,
      fault.reason,
    ]),
    [
      [
        hostname(),
        UNBINDABLE,
        `451 4.4.0 source address ${UNBINDABLE} cannot be bound on node ${hostname()} (EADDRNOTAVAIL): add it to an interface of this host or remove it from its pool`,
      ],
    ],
  );

  // No address of the pool binds any more: the row is deferred saying so, and the queue view shows it.
  const bound = (created.body.addresses as Array<{ id: string; ip: string }>).find((a) => a.ip === BINDABLE)!;
  assert.is((await admin('DELETE', `/platform/ip-pools/${poolId}/addresses/${bound.id}`)).status, 200);
  await send('late@far.test');
  const check = await openWorldDatabase(world);
  try {
    await waitFor(
      'the row deferred, naming the address and the node',
      async () =>
        (await countRows(
          check,
          `SELECT count(*) FROM mta_spool WHERE state = 'deferred' AND last_response LIKE :reason`,
          { reason: `%source address ${UNBINDABLE} cannot be bound on node ${hostname()} (EADDRNOTAVAIL)%` },
        )) === 1,
      { timeoutMs: 30_000 },
    );
  } finally {
    await check.close();
  }
  const destination = (await admin('GET', '/platform/queue?domain=far.test')).body.data[0];
  assert.is(destination.deferred, 1);
  assert.match(destination.lastResponse, `source address ${UNBINDABLE} cannot be bound on node ${hostname()}`);
  assert.is(mx.messages.length, 4, 'nothing left from the unbindable address');
});

test.run();
