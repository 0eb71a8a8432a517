// Direct delivery's connections against real MX hosts (smtp-server on port 25 of loopback aliases):
// one transaction with N RCPTs and a verdict per recipient, the source address and EHLO name, STARTTLS
// when offered, MX order and fallback only when a host cannot be reached, the pool's limits on
// connections and messages per connection, and the outcomes of 4xx, 5xx, timeouts and resets mid-DATA.
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { makeSelfSignedPair } from './helpers/certificates.ts';
import { freeLoopbackAddress, startMxHost, type MxHost } from './helpers/mx-host.ts';
import { DEFAULT_POOL_LIMITS, DestinationPool, type PoolLimits, type TlsPlan } from '../daemon/mta/pool.ts';
import type { SessionOptions } from '../daemon/mta/connection.ts';
import type { MxHost as RouteHost } from '../daemon/mta/mx.ts';

const opportunistic: TlsPlan = () => ({ mode: 'opportunistic', tls: { rejectUnauthorized: false } });
const hostsToClose: MxHost[] = [];
const poolsToClose: DestinationPool[] = [];
let sourceAddress: string;

async function mx(script: Parameters<typeof startMxHost>[0] = {}): Promise<MxHost> {
  const host = await startMxHost(script);
  hostsToClose.push(host);
  return host;
}

function route(...hosts: MxHost[]): RouteHost[] {
  return hosts.map((host, index) => ({
    name: `mx${index}.dest.test`,
    priority: 10 * (index + 1),
    addresses: [host.address],
  }));
}

function pool(limits: Partial<PoolLimits> = {}, session: Partial<SessionOptions> = {}): DestinationPool {
  const created = new DestinationPool(
    { ...DEFAULT_POOL_LIMITS, ...limits },
    { ehloName: 'mta.svc.test', localAddress: sourceAddress, socketTimeoutMs: 2000, ...session },
  );
  poolsToClose.push(created);
  return created;
}

function message(subject: string): Buffer {
  return Buffer.from(
    `From: App <app@sender.test>\r\nTo: someone@dest.test\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@sender.test>\r\n\r\nHello ${subject}\r\n`,
  );
}

function verdicts(report: { recipients: { address: string; verdict: { kind: string } }[] }) {
  return Object.fromEntries(
    report.recipients.map(({ address, verdict }) => [
      address,
      verdict.kind === 'bounced'
        ? `bounced:${(verdict as unknown as { bounceType: string }).bounceType}`
        : verdict.kind,
    ]),
  );
}

test.before(async () => {
  sourceAddress = await freeLoopbackAddress();
});

test.after(async () => {
  for (const created of poolsToClose) created.close();
  await Promise.all(hostsToClose.map((host) => host.close()));
});

test('one transaction with every RCPT, a verdict per recipient, from our address and EHLO name, over STARTTLS', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mta-'));
  const pair = makeSelfSignedPair(dir, 'mx', 'mx0.dest.test');
  const refusals: Record<string, string> = {
    'gone@dest.test': '550 5.1.1 no such user',
    'full@dest.test': '552 5.2.2 mailbox full',
    'later@dest.test': '451 4.7.1 greylisted, try again',
    'spam@dest.test': '550 5.7.1 message refused as spam',
  };
  const host = await mx({ tls: pair, rcpt: (address) => refusals[address] ?? null });
  const to = [
    'one@dest.test',
    'gone@dest.test',
    'full@dest.test',
    'two@dest.test',
    'later@dest.test',
    'spam@dest.test',
  ];
  const raw = message('per-recipient');
  const report = await pool().deliver(route(host), opportunistic, { from: 'bounce+1@rp.svc.test', to }, raw);
  assert.equal(verdicts(report), {
    'one@dest.test': 'delivered',
    'gone@dest.test': 'bounced:hard',
    'full@dest.test': 'bounced:soft',
    'two@dest.test': 'delivered',
    'later@dest.test': 'deferred',
    'spam@dest.test': 'bounced:policy',
  });
  const later = report.recipients.find((r) => r.address === 'later@dest.test')!.verdict;
  assert.is(later.response, '451 4.7.1 greylisted, try again', 'the last response is kept for the timeline');
  assert.match(report.recipients[0].verdict.response, /^250 /);
  assert.is(host.messages.length, 1, 'one transaction');
  const [received] = host.messages;
  assert.equal(received.to, ['one@dest.test', 'two@dest.test']);
  assert.is(received.from, 'bounce+1@rp.svc.test');
  assert.ok(received.raw.toString().includes('Hello per-recipient'), 'the body as given');
  assert.is(received.remoteAddress, sourceAddress, 'bound to the configured source address');
  assert.is(received.helo, 'mta.svc.test', 'our EHLO name');
  assert.is(received.secure, true, 'STARTTLS taken when offered (certificate not checked: opportunistic)');
  assert.equal([report.host, report.secure], ['mx0.dest.test', true]);
});

test('MX order: an unreachable host passes to the next; a host that answers decides', async () => {
  const down = { name: 'down.dest.test', priority: 5, addresses: [await freeLoopbackAddress()] };
  const up = await mx();
  const report = await pool().deliver(
    [down, ...route(up)],
    opportunistic,
    { from: 'a@rp.test', to: ['x@dest.test'] },
    message('fallback'),
  );
  assert.equal(verdicts(report), { 'x@dest.test': 'delivered' });
  assert.is(report.host, 'mx0.dest.test');
  assert.is(up.messages.length, 1);

  const deferring = await mx({ rcpt: () => '451 4.3.2 system busy' });
  const backup = await mx();
  const answered = await pool().deliver(
    route(deferring, backup),
    opportunistic,
    { from: 'a@rp.test', to: ['y@dest.test'] },
    message('no-fallback'),
  );
  assert.equal(verdicts(answered), { 'y@dest.test': 'deferred' });
  assert.is(backup.messages.length, 0, 'a 4xx answer is the domain answer; the next MX is not tried');

  const nobody = await pool().deliver(
    [down],
    opportunistic,
    { from: 'a@rp.test', to: ['z@dest.test'] },
    message('nobody'),
  );
  assert.equal(verdicts(nobody), { 'z@dest.test': 'deferred' });
  assert.match(nobody.recipients[0].verdict.response, /down\.dest\.test .*ECONNREFUSED|ECONNECTION/);
});

test('PIPELINING: MAIL, every RCPT and DATA leave in one write when the peer offers it', async () => {
  // A hand-written peer, because smtp-server hides how commands arrive: it records each read.
  const address = await freeLoopbackAddress();
  const reads: string[] = [];
  const server = net.createServer((socket) => {
    let buffer = '';
    let inData = false;
    socket.write('220 raw.dest.test ESMTP\r\n');
    socket.on('data', (chunk) => {
      reads.push(chunk.toString());
      buffer += chunk.toString();
      for (;;) {
        if (inData) {
          const end = buffer.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buffer = buffer.slice(end + 5);
          inData = false;
          socket.write('250 2.0.0 queued\r\n');
          continue;
        }
        const lineEnd = buffer.indexOf('\r\n');
        if (lineEnd < 0) return;
        const line = buffer.slice(0, lineEnd);
        buffer = buffer.slice(lineEnd + 2);
        if (/^EHLO/i.test(line)) socket.write('250-raw.dest.test\r\n250 PIPELINING\r\n');
        else if (/^DATA/i.test(line)) {
          inData = true;
          socket.write('354 go ahead\r\n');
        } else if (/^QUIT/i.test(line)) socket.end('221 bye\r\n');
        else socket.write('250 2.1.0 ok\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(25, address, resolve));
  const rawPool = pool();
  try {
    const report = await rawPool.deliver(
      [{ name: 'raw.dest.test', priority: 10, addresses: [address] }],
      opportunistic,
      { from: 'a@rp.test', to: ['p@dest.test', 'q@dest.test', 'r@dest.test'] },
      message('pipelined'),
    );
    assert.equal(verdicts(report), {
      'p@dest.test': 'delivered',
      'q@dest.test': 'delivered',
      'r@dest.test': 'delivered',
    });
    const envelopeRead = reads.find((read) => read.startsWith('MAIL FROM:'));
    assert.ok(envelopeRead, 'MAIL FROM was read');
    assert.equal(
      envelopeRead!.trim().split('\r\n'),
      ['MAIL FROM:<a@rp.test>', 'RCPT TO:<p@dest.test>', 'RCPT TO:<q@dest.test>', 'RCPT TO:<r@dest.test>', 'DATA'],
      'the whole envelope and DATA in one read',
    );
  } finally {
    rawPool.close(); // QUIT on the idle session, so that the server can close
    await new Promise((resolve) => server.close(resolve));
  }
});

test('the pool: at most N connections, M messages per connection, idle connections reused', async () => {
  const host = await mx({ data: () => new Promise((resolve) => setTimeout(() => resolve(null), 20)) });
  const limited = pool({ maxConnections: 2, maxMessagesPerConnection: 3 });
  const reports = await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      limited.deliver(route(host), opportunistic, { from: 'a@rp.test', to: [`r${i}@dest.test`] }, message(`m${i}`)),
    ),
  );
  assert.ok(reports.every((report) => report.recipients[0].verdict.kind === 'delivered'));
  assert.is(host.messages.length, 10);
  assert.ok(host.maxConcurrentConnections <= 2, `at most 2 at once, saw ${host.maxConcurrentConnections}`);
  const perConnection = new Map<string, number>();
  for (const received of host.messages)
    perConnection.set(received.connection, (perConnection.get(received.connection) ?? 0) + 1);
  assert.ok(
    [...perConnection.values()].every((count) => count <= 3),
    `≤ 3 per connection: ${[...perConnection.values()]}`,
  );
  assert.ok(perConnection.size >= 4, '10 messages at 3 per connection need at least 4 connections');

  const reuse = await mx();
  const shared = pool();
  for (const tenant of ['t1', 't2', 't3'])
    await shared.deliver(
      route(reuse),
      opportunistic,
      { from: `${tenant}@rp.test`, to: ['q@dest.test'] },
      message(tenant),
    );
  assert.is(new Set(reuse.messages.map((m) => m.connection)).size, 1, 'one connection carried three tenants in turn');
  assert.is(reuse.connectionsOpened, 1);
});

test('more recipients than a transaction takes become several transactions', async () => {
  const host = await mx();
  const to = ['a', 'b', 'c', 'd', 'e'].map((name) => `${name}@dest.test`);
  const report = await pool({ maxRecipientsPerTransaction: 2 }).deliver(
    route(host),
    opportunistic,
    { from: 'a@rp.test', to },
    message('split'),
  );
  assert.is(report.recipients.length, 5);
  assert.equal(
    host.messages.map((m) => m.to),
    [['a@dest.test', 'b@dest.test'], ['c@dest.test', 'd@dest.test'], ['e@dest.test']],
  );
});

test('DATA answered 4xx or 5xx, never answered, or reset mid-DATA; the pool carries on after each', async () => {
  const answers = ['451 4.3.0 try later', '554 5.7.1 rejected by content policy', 'hang', 'reset'] as const;
  let next = 0;
  const host = await mx({ data: () => answers[next++] ?? null });
  const shared = pool({}, { socketTimeoutMs: 400 });
  const send = (subject: string) =>
    shared.deliver(
      route(host),
      opportunistic,
      { from: 'a@rp.test', to: ['u@dest.test', 'v@dest.test'] },
      message(subject),
    );
  const deferred = await send('data-451');
  assert.equal(verdicts(deferred), { 'u@dest.test': 'deferred', 'v@dest.test': 'deferred' });
  assert.is(deferred.recipients[0].verdict.response, '451 4.3.0 try later');
  const refused = await send('data-554');
  assert.equal(verdicts(refused), { 'u@dest.test': 'bounced:policy', 'v@dest.test': 'bounced:policy' });
  const started = Date.now();
  const hung = await send('data-hang');
  assert.equal(verdicts(hung), { 'u@dest.test': 'deferred', 'v@dest.test': 'deferred' });
  assert.match(hung.recipients[0].verdict.response, /ETIMEDOUT/);
  assert.ok(Date.now() - started < 3000, 'bounded by the socket timeout');
  const reset = await send('data-reset');
  assert.equal(verdicts(reset), { 'u@dest.test': 'deferred', 'v@dest.test': 'deferred' });
  const after = await send('after');
  assert.equal(verdicts(after), { 'u@dest.test': 'delivered', 'v@dest.test': 'delivered' });
  assert.equal(
    host.messages.map((m) => m.raw.toString().match(/Subject: (\S+)/)?.[1]),
    ['after'],
    'only the last message was taken',
  );
});

test.run();
