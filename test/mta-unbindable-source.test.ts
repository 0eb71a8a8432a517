// A source address this node cannot bind (issue 48 §5): a running daemon with DELIVERY=direct, a pool of
// a loopback address (127.0.0.150, bindable) and 10.254.254.254 (on no interface of this host; written
// straight into the table, as another node would have added it). Mail leaves from the bindable address
// only, and the unbindable one is an operator alert in GET /platform/queue and `svc queue` instead of
// a row retrying quietly with `bind EADDRNOTAVAIL` for five days. With no bindable address left in the
// pool, the rows are deferred saying which address cannot be bound on which node.
import { hostname } from 'node:os';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { MxHost } from './helpers/mx-host.ts';
import { MtaFixture } from './helpers/mta-fixture.ts';
import { api, countRows, type SendWorld } from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';

const MX_ADDRESS = '127.0.0.151';
const BINDABLE = '127.0.0.150';
const UNBINDABLE = '10.254.254.254';

let mta: MtaFixture;
let mx: MxHost;
let world: SendWorld;
let adminToken: string;

test.before(async () => {
  mta = await MtaFixture.start();
  mx = await mta.mxHost({}, MX_ADDRESS, ['far.test']);
  world = await mta.seed({ EHLO_NAME: 'node.acme.test', SEND_RETRY_BASE_MS: '60000' });
  adminToken = await mta.adminToken();
  await mta.startDaemon();
});

test.after(async () => {
  await mta?.close();
});

/** A platform admin's call on the daemon. */
function admin(method: string, path: string, body?: unknown): ReturnType<typeof api> {
  return api(world, method, path, body, adminToken);
}

test('mail leaves from the pool address that binds; the one that does not is an alert in the queue view', async () => {
  const created = await admin('POST', '/platform/ip-pools', {
    name: 'half-real',
    addresses: [{ ip: BINDABLE, ehloName: 'out.acme.test', warmup: false }],
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const poolId = created.body.id as string;
  await mta.withDatabase((db) =>
    db.sequelize.query(
      `INSERT INTO ip_pool_addresses (pool_id, ip, ehlo_name) VALUES (:poolId, :ip, 'gone.acme.test')`,
      { replacements: { poolId, ip: UNBINDABLE } },
    ),
  );
  const assigned = await admin('POST', `/platform/ip-pools/${poolId}/assignments`, { tenantId: world.tenantId });
  assert.is(assigned.status, 201, JSON.stringify(assigned.body));

  const ids = await Promise.all([1, 2, 3, 4].map((n) => mta.send(`user${n}@far.test`)));
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
  await mta.send('late@far.test');
  await mta.withDatabase((check) =>
    waitFor(
      'the row deferred, naming the address and the node',
      async () =>
        (await countRows(
          check,
          `SELECT count(*) FROM mta_spool WHERE state = 'deferred' AND last_response LIKE :reason`,
          { reason: `%source address ${UNBINDABLE} cannot be bound on node ${hostname()} (EADDRNOTAVAIL)%` },
        )) === 1,
      { timeoutMs: 30_000 },
    ),
  );
  const destination = (await admin('GET', '/platform/queue?domain=far.test')).body.data[0];
  assert.is(destination.deferred, 1);
  assert.match(destination.lastResponse, `source address ${UNBINDABLE} cannot be bound on node ${hostname()}`);
  assert.is(mx.messages.length, 4, 'nothing left from the unbindable address');
});

test.run();
