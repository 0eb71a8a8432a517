// The pool as shaping uses it (mta/shaping.ts): one pool shared by the destinations of a provider, whose
// MX host names differ (gmail.com's and a Workspace domain's), and limits that change while it runs.
// Real SMTP peers on 127.0.0.145–146.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_POOL_LIMITS, DestinationPool, type TlsPlan } from '../daemon/mta/pool.ts';
import type { MxHost as RouteHost } from '../daemon/mta/mx.ts';
import { startMxHost, type MxHost } from './helpers/mx-host.ts';

const opportunistic: TlsPlan = () => ({ mode: 'opportunistic', tls: { rejectUnauthorized: false } });
let gmail: MxHost;
let workspace: MxHost;
let pool: DestinationPool;

test.before(async () => {
  gmail = await startMxHost({}, '127.0.0.145');
  workspace = await startMxHost({}, '127.0.0.146');
  // Idle sessions would wait an hour: only the pool making room lets a second host be reached.
  pool = new DestinationPool(
    { ...DEFAULT_POOL_LIMITS, maxConnections: 1, idleTimeoutMs: 3_600_000 },
    { ehloName: 'mta.svc.test', socketTimeoutMs: 60_000 },
  );
});

test.after(async () => {
  pool?.close();
  await Promise.all([gmail?.close(), workspace?.close()]);
});

const route = (name: string, host: MxHost): RouteHost[] => [{ name, priority: 10, addresses: [host.address] }];
/** A pool that never makes room would wait out the hour: fail instead of hanging the file. */
function settles<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within 15 s`)), 15_000);
  });
  return Promise.race([promise, hung]).finally(() => clearTimeout(timer));
}

const raw = (subject: string) => Buffer.from(`From: a@sender.test\r\nSubject: ${subject}\r\n\r\nHello\r\n`);

test('at its connection limit, an idle session to another MX host is closed to make room', async () => {
  const first = await pool.deliver(
    route('gmail-smtp-in.l.google.com', gmail),
    opportunistic,
    { from: 'b@sender.test', to: ['x@gmail.test'] },
    raw('one'),
  );
  assert.is(first.recipients[0].verdict.kind, 'delivered');
  const second = await settles(
    pool.deliver(
      route('aspmx.l.google.com', workspace),
      opportunistic,
      { from: 'b@sender.test', to: ['y@workspace.test'] },
      raw('two'),
    ),
    'the delivery to the second host',
  );
  assert.is(second.recipients[0].verdict.kind, 'delivered');
  assert.is(pool.connections, 1);
  assert.equal([gmail.messages.length, workspace.messages.length], [1, 1]);
});

test('limits changed while it runs: messages per connection from the next message on', async () => {
  pool.setLimits({ ...DEFAULT_POOL_LIMITS, maxConnections: 1, maxMessagesPerConnection: 2, idleTimeoutMs: 3_600_000 });
  for (const subject of ['a', 'b', 'c', 'd', 'e'])
    await pool.deliver(
      route('aspmx.l.google.com', workspace),
      opportunistic,
      { from: 'b@sender.test', to: ['y@workspace.test'] },
      raw(subject),
    );
  const perConnection = new Map<string, number>();
  for (const message of workspace.messages)
    perConnection.set(message.connection, (perConnection.get(message.connection) ?? 0) + 1);
  // The first connection carried 'two' (limit then 100) and 'a'; then 2, 2.
  assert.equal([...perConnection.values()], [2, 2, 2]);
  assert.is(workspace.maxConcurrentConnections, 1);
});

test.run();
