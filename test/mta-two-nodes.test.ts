// Direct delivery shared by two worker nodes (issue 51 §4, docs/mta.md "Several worker nodes"): an API
// node and two `ROLE=worker DELIVERY=direct` nodes on one PostgreSQL, ten loopback MX hosts
// (127.0.0.170–179) named in the test DNS server. Everything is counted at the MX hosts: each message's
// Message-ID, the connections open at once per host, the messages per connection, and which node sent
// each message (every node says its own EHLO name). The provider's figures and the tenant's throttle
// are set through the platform API, as an operator sets them.
//
// Phases, each on the same running nodes: both nodes together (exactly once, the limits held); node C
// joining mid-run (it takes a share, the limit still held) and leaving with SIGTERM (A and B take its
// share back: more connections per host than three nodes had); node B killed with SIGKILL mid-run (every
// message delivered, duplicates at most what B had leased, its rows taken over within the 20 s lease).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QueryTypes } from 'sequelize';
import type { Database } from '../daemon/db/index.ts';
import { Admin } from '../daemon/modules/auth/model.ts';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { startMxHost, type MxHost, type ReceivedMessage } from './helpers/mx-host.ts';
import {
  api,
  killAllDaemons,
  openWorldDatabase,
  publishSenderDmarc,
  seedAnotherTenant,
  seedSendWorld,
  signAccessToken,
  spawnChildDaemon,
  startChildDaemon,
  stopChildDaemon,
  type ChildDaemon,
  type SendWorld,
} from './helpers/send-daemon.ts';
import { waitFor } from './helpers/wait.ts';

const HOSTS = 10;
/** The `default` provider's figures, set through the API: per destination domain, over every node. */
const MAX_CONNECTIONS = 5;
const MESSAGES_PER_CONNECTION = 10;
/** The throttled tenant's messages per second, over every node. */
const PER_SECOND = 10;
/** What a receipt's latency (compose is done, the attempt's SMTP exchange is not) may add on a loaded box. */
const RECEIPT_SLACK_MS = 500;
/** The MTA thread's lease (jobs/index.ts MTA_WORKER): a killed node's rows are taken over after it. */
const LEASE_MS = 20_000;

let dns: TestDnsServer;
const mx: MxHost[] = [];
/** How long every MX host takes to answer DATA: long enough for connections to pile up to the limit. */
let dataDelayMs = 30;
/** Messages from this node (by EHLO name) wait for `gate` before their reply: in flight when it dies. */
let holdNode: string | null = null;
let gated = 0;
const gatedRecipients = new Set<string>();
let openGate: () => void = () => {};
const gate = new Promise<void>((resolve) => (openGate = resolve));
let world: SendWorld;
let throttled: { tenantId: string; apiKey: string };
let apiNode: ChildDaemon;
const workers = new Map<string, ChildDaemon>();
let adminToken: string;
let db: Database;

const domainOf = (i: number) => `d${i % HOSTS}.two-nodes.test`;

test.before(async () => {
  dns = await startDnsServer();
  publishSenderDmarc(dns);
  for (let i = 0; i < HOSTS; i++) {
    const host = await startMxHost(
      {
        data: async (message) => {
          if (holdNode !== null && message.helo === holdNode) {
            gated++;
            gatedRecipients.add(message.to[0]);
            await gate;
          }
          return new Promise((resolve) => setTimeout(() => resolve(null), dataDelayMs));
        },
      },
      `127.0.0.${170 + i}`,
    );
    mx.push(host);
    dns.zone.mx.set(domainOf(i), [{ exchange: `mx.${domainOf(i)}`, priority: 10 }]);
    dns.zone.a.set(`mx.${domainOf(i)}`, [host.address]);
  }
  world = await seedSendWorld({ DELIVERY: 'direct', DNS_SERVERS: dns.address, SEND_RETRY_BASE_MS: '1000' });
  assert.ok(world.database.url, 'several nodes share one PostgreSQL: set DATABASE_URL');
  throttled = await seedAnotherTenant(world);
  const seed = await openWorldDatabase(world);
  try {
    const operator = await Admin.create({
      email: 'two-nodes@example.test',
      passwordHash: 'fixture-has-no-password',
      isPlatformAdmin: true,
      emailVerifiedAt: new Date(),
    });
    adminToken = signAccessToken(world, operator.id, true);
  } finally {
    await seed.close();
  }
  apiNode = await startChildDaemon({ ...world, env: { ...world.env, ROLE: 'api' } });
  const provider = await admin('PUT', '/platform/providers/default', {
    maxConnections: MAX_CONNECTIONS,
    maxMessagesPerConnection: MESSAGES_PER_CONNECTION,
  });
  assert.is(provider.status, 200, JSON.stringify(provider.body));
  const throttle = await admin('PUT', `/platform/tenants/${throttled.tenantId}/throttle`, {
    messagesPerSecond: PER_SECOND,
    messagesPerHour: null,
  });
  assert.is(throttle.status, 200, JSON.stringify(throttle.body));
  await Promise.all([startWorker('a'), startWorker('b')]);
  await waitForShares(['a', 'b'], 2);
  db = await openWorldDatabase(world);
});

test.after(async () => {
  for (const worker of workers.values()) await stopChildDaemon(worker, 5_000);
  if (apiNode) await stopChildDaemon(apiNode, 5_000);
  killAllDaemons();
  await db?.close();
  await Promise.all([...mx, dns].map((closable) => closable?.close()));
  await world?.database.drop();
});

function admin(method: string, path: string, body?: unknown): ReturnType<typeof api> {
  return api(world, method, path, body, adminToken);
}

/** A `ROLE=worker DELIVERY=direct` node saying EHLO `<name>.acme.test`; resolves once its threads run. */
async function startWorker(name: string): Promise<ChildDaemon> {
  const node = spawnChildDaemon({
    ...world,
    env: { ...world.env, ROLE: 'worker', PORT: '0', EHLO_NAME: `${name}.acme.test` },
  });
  workers.set(name, node);
  let exited = false;
  void node.exit.then(() => (exited = true));
  await waitFor(
    `node ${name}'s worker threads`,
    () => {
      if (exited) throw new Error(`node ${name} exited:\n${node.output()}`);
      return /worker threads started/.test(node.output());
    },
    { timeoutMs: 90_000, intervalMs: 100, details: node.output },
  );
  return node;
}

/**
 * Waits until each named node's MTA loop says it divides the shaping figures by `count` nodes (it
 * reloads on a node's arrival or clean departure, and every 10 s for a killed one).
 */
async function waitForShares(names: string[], count: number): Promise<void> {
  const said = (name: string) => {
    const lines =
      workers
        .get(name)!
        .output()
        .match(/"workerNodes":(\d+)/g) ?? [];
    return lines.length === 0 ? 1 : Number(lines.at(-1)!.split(':')[1]);
  };
  await waitFor(`${names.join(', ')} dividing by ${count} nodes`, () => names.every((name) => said(name) === count), {
    timeoutMs: 60_000,
    intervalMs: 100,
    details: () => names.map((name) => `${name}: ${said(name)}`).join(', '),
  });
}

async function sendBatch(recipients: string[], as: Pick<SendWorld, 'apiKey'> = world): Promise<void> {
  for (let i = 0; i < recipients.length; i += 100) {
    const res = await api({ ...world, apiKey: as.apiKey }, 'POST', '/emails/batch', {
      from: 'Acme <app@acme.test>',
      subject: 'two nodes',
      textBody: 'Hello from one of two nodes',
      recipients: recipients.slice(i, i + 100).map((to) => ({ to })),
    });
    assert.is(res.status, 202, JSON.stringify(res.body));
    assert.is(res.body.rejected.length, 0, JSON.stringify(res.body.rejected));
  }
}

const received = (): ReceivedMessage[] => mx.flatMap((host) => host.messages);
const messageIdOf = (message: ReceivedMessage) => /^Message-ID:\s*(\S+)/im.exec(message.raw.toString('latin1'))?.[1];
const ofPhase = (prefix: string) => received().filter((m) => m.to[0].startsWith(prefix));
const uniqueRecipients = (messages: ReceivedMessage[]) => new Set(messages.map((m) => m.to[0])).size;

/** The most connections any MX host had open at once since the last reset. */
function resetConcurrency(): void {
  for (const host of mx) host.maxConcurrentConnections = 0;
}
const maxConcurrency = () => Math.max(...mx.map((host) => host.maxConcurrentConnections));

function perConnection(messages: ReceivedMessage[]): number[] {
  const counts = new Map<string, number>();
  for (const m of messages) {
    const key = `${m.remoteAddress}|${m.connection}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts.values()];
}

const byNode = (messages: ReceivedMessage[]) => {
  const counts: Record<string, number> = {};
  for (const m of messages) counts[m.helo] = (counts[m.helo] ?? 0) + 1;
  return counts;
};

/** A node's warnings and errors (pino levels 40 and up), for a failure's message. */
const problems = (node: ChildDaemon) =>
  node
    .output()
    .split('\n')
    .filter((line) => /"level":(40|50|60)/.test(line))
    .slice(-10)
    .join('\n');

async function count(query: string, replacements: Record<string, unknown> = {}): Promise<number> {
  const [row] = await db.sequelize.query<{ n: number }>(query, { replacements, type: QueryTypes.SELECT });
  return row.n;
}

test('two nodes: each message once, 5 connections and 10 messages per connection per MX host, the throttle over both', async () => {
  resetConcurrency();
  const plain = Array.from({ length: 600 }, (_, i) => `p${i}@${domainOf(i)}`);
  const paced = Array.from({ length: 30 }, (_, i) => `t${i}@${domainOf(i)}`);
  await Promise.all([sendBatch(plain), sendBatch(paced, throttled)]);
  await waitFor('630 messages at the MX hosts', () => ofPhase('p').length + ofPhase('t').length >= 630, {
    timeoutMs: 60_000,
    details: () => JSON.stringify(byNode(received())),
  });
  const messages = [...ofPhase('p'), ...ofPhase('t')];
  assert.is(messages.length, 630, 'no message twice');
  assert.is(uniqueRecipients(messages), 630);
  assert.is(new Set(messages.map(messageIdOf)).size, 630, 'each Message-ID once');
  assert.ok(maxConcurrency() <= MAX_CONNECTIONS, `at most ${MAX_CONNECTIONS} at once, saw ${maxConcurrency()}`);
  assert.ok(maxConcurrency() >= 2, 'the load did use several connections per host');
  const perConn = perConnection(messages);
  assert.ok(Math.max(...perConn) <= MESSAGES_PER_CONNECTION, JSON.stringify(perConn));
  // Both nodes delivered: each a share of the 630.
  const nodes = byNode(messages);
  assert.ok((nodes['a.acme.test'] ?? 0) >= 30 && (nodes['b.acme.test'] ?? 0) >= 30, JSON.stringify(nodes));
  // 10 a second over both nodes (5 each): the 30 span at least ~2.9 s, less a receipt's latency (a loaded
  // box bunches receipts: the first ones wait on their connections). Each node at the whole rate would
  // send them in ~1.5 s.
  const times = ofPhase('t')
    .map((m) => m.receivedAt)
    .sort((a, b) => a - b);
  const span = times.at(-1)! - times[0];
  assert.ok(
    span >= ((times.length - 1) / PER_SECOND) * 1_000 - RECEIPT_SLACK_MS,
    `the throttled 30 spanned ${span} ms: ${JSON.stringify(times.map((t) => t - times[0]))}`,
  );
});

/** Holds five of the ten destinations (the platform queue API): their rows wait until released. */
async function holdHalf(action: 'hold' | 'release'): Promise<void> {
  for (let i = 5; i < HOSTS; i++) {
    const res = await admin('POST', `/platform/queue/${domainOf(i)}/${action}`, action === 'hold' ? {} : undefined);
    assert.is(res.status, 200, JSON.stringify(res.body));
  }
}

const isHeldHalf = (m: ReceivedMessage) => Number(/@d(\d)\./.exec(m.to[0])![1]) >= 5;

test('node C joins mid-run and takes a share; leaving, it gives it back to nodes A and B', async () => {
  dataDelayMs = 100;
  resetConcurrency();
  // Half the run waits (held destinations) while C boots, so that there is work left when it joins.
  await holdHalf('hold');
  await sendBatch(Array.from({ length: 600 }, (_, i) => `j${i}@${domainOf(i)}`));
  await waitFor('the unheld half delivered', () => ofPhase('j').length >= 300, { timeoutMs: 60_000 });
  const c = await startWorker('c');
  await waitForShares(['a', 'b', 'c'], 3);
  await holdHalf('release');
  await waitFor('the run delivered', () => uniqueRecipients(ofPhase('j')) === 600, { timeoutMs: 60_000 });
  const joined = ofPhase('j');
  assert.is(joined.length, 600, 'no message twice');
  const shares = byNode(joined.filter(isHeldHalf));
  assert.ok(
    (shares['c.acme.test'] ?? 0) >= 30,
    `C took a share of the held half: ${JSON.stringify(shares)}\n${problems(c)}`,
  );
  assert.ok(maxConcurrency() <= MAX_CONNECTIONS, `at most ${MAX_CONNECTIONS} at once, saw ${maxConcurrency()}`);
  assert.ok(Math.max(...perConnection(joined)) <= MESSAGES_PER_CONNECTION);

  // C leaves cleanly mid-run: its leases go back at once, and A and B take 2 connections each again.
  await holdHalf('hold');
  await sendBatch(Array.from({ length: 600 }, (_, i) => `l${i}@${domainOf(i)}`));
  await waitFor('C sending the second run', () => ofPhase('l').some((m) => m.helo === 'c.acme.test'), {
    timeoutMs: 30_000,
  });
  assert.is(await stopChildDaemon(c, 20_000), 0, c.output());
  workers.delete('c');
  await waitForShares(['a', 'b'], 2);
  resetConcurrency();
  await holdHalf('release');
  await waitFor('the second run delivered', () => uniqueRecipients(ofPhase('l')) === 600, { timeoutMs: 60_000 });
  const left = ofPhase('l');
  assert.is(left.length, 600, 'a clean leave resends nothing');
  assert.ok(maxConcurrency() <= MAX_CONNECTIONS, `at most ${MAX_CONNECTIONS} at once, saw ${maxConcurrency()}`);
  // Three nodes had 1 connection each per host; two have 2 each.
  assert.ok(maxConcurrency() > 3, `A and B used ${maxConcurrency()} connections to one host`);
  await waitFor('the spool empty', async () => (await count(`SELECT count(*)::int AS n FROM mta_spool`)) === 0);
});

test('kill -9 of node B mid-run: every message delivered, duplicates at most what B held, its rows taken over within the lease', async () => {
  const b = workers.get('b')!;
  const owner = `%:${b.child.pid}:%`;
  const recipients = Array.from({ length: 600 }, (_, i) => `k${i}@${domainOf(i)}`);
  await sendBatch(recipients);
  await waitFor('node B delivering the run', () => ofPhase('k').filter((m) => m.helo === 'b.acme.test').length >= 20, {
    timeoutMs: 60_000,
    intervalMs: 20,
  });
  // B's next messages wait for their reply to DATA (in flight when it dies); A goes on.
  holdNode = 'b.acme.test';
  await waitFor(
    'every message spooled, B with messages in flight and rows leased',
    async () =>
      gated >= 5 &&
      (await count(`SELECT count(*)::int AS n FROM jobs WHERE queue = 'send'`)) === 0 &&
      (await count(`SELECT count(*)::int AS n FROM mta_spool WHERE state = 'leased' AND lease_owner LIKE :owner`, {
        owner,
      })) >= gated,
    { timeoutMs: 60_000, intervalMs: 50 },
  );
  b.child.kill('SIGKILL');
  await b.exit;
  workers.delete('b');
  const killedAt = Date.now();
  const held = await db.sequelize.query<{ id: string }>(
    `SELECT id::text AS id FROM mta_spool WHERE state = 'leased' AND lease_owner LIKE :owner`,
    { replacements: { owner }, type: QueryTypes.SELECT },
  );
  const heldIds = held.map((row) => row.id);
  // The MX host takes what B had sent: its replies reach nobody, and A sends those messages again.
  holdNode = null;
  openGate();
  await waitFor(
    "node B's rows taken over and finished",
    async () =>
      (await count(`SELECT count(*)::int AS n FROM mta_spool WHERE id::text IN (:ids)`, { ids: heldIds })) === 0,
    { timeoutMs: LEASE_MS + 30_000 },
  );
  const tookOverMs = Date.now() - killedAt;
  await waitFor('every message of the run at the MX hosts', () => uniqueRecipients(ofPhase('k')) === 600, {
    timeoutMs: 30_000,
  });
  const messages = ofPhase('k');
  const duplicates = messages.length - uniqueRecipients(messages);
  assert.ok(duplicates <= heldIds.length, `${duplicates} duplicates, B held ${heldIds.length} rows`);
  assert.ok(duplicates >= 1, 'what B had in flight went again (its replies were lost)');
  assert.is(messages.length - new Set(messages.map(messageIdOf)).size, duplicates, 'counted by Message-ID too');
  assert.ok(tookOverMs <= LEASE_MS + 15_000, `B's rows finished ${tookOverMs} ms after the kill`);
  // What B held went out from A.
  const heldAgain = messages.filter((m) => m.receivedAt > killedAt);
  assert.ok(
    heldAgain.every((m) => m.helo === 'a.acme.test' || gatedRecipients.has(m.to[0])),
    JSON.stringify(byNode(heldAgain)),
  );
  assert.ok(maxConcurrency() <= MAX_CONNECTIONS, `at most ${MAX_CONNECTIONS} at once, saw ${maxConcurrency()}`);
  console.log(
    `two nodes: B held ${heldIds.length} rows at the kill (${gated} awaiting a reply), ${duplicates} duplicates, its rows finished ${tookOverMs} ms after`,
  );
});

test.run();
