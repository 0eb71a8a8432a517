// The judge of negative DNS answers (daemon/mta/resolver-health.ts, issue 49 §3) against the project's
// DNS server, on a clock the test moves: an NXDOMAIN is a deferral while the canaries fail, for a domain
// routed to MX hosts within the hour, and until a look-up DNS_NXDOMAIN_CONFIRM_MS after the first says
// it again; a null MX is believed at once; a positive answer marks an unhealthy resolver healthy.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.ts';
import { createDnsClient, type DnsClient } from '../daemon/mta/dns-query.ts';
import { RouteCache } from '../daemon/mta/mx.ts';
import { NegativeAnswers, ResolverHealth, type ResolverState } from '../daemon/mta/resolver-health.ts';

let dns: TestDnsServer;
let client: DnsClient;
let clock = Date.parse('2026-11-28T10:00:00Z');
const now = () => clock;
const CONFIRM_MS = 10 * 60_000;

test.before(async () => {
  dns = await startDnsServer();
  client = createDnsClient({ servers: [dns.address], timeoutMs: 300 });
  dns.zone.mx.set('canary.test', [{ exchange: 'mx.canary.test', priority: 10 }]);
  dns.zone.mx.set('known.test', [{ exchange: 'mx.known.test', priority: 10 }]);
  dns.zone.a.set('mx.known.test', ['127.0.0.90']);
  dns.zone.mx.set('nullmx.test', [{ exchange: '.', priority: 0 }]);
});

test.after(async () => {
  await dns.close();
});

function judge(checks: ResolverState[] = []) {
  const health = new ResolverHealth(client, { canaries: ['canary.test'], onCheck: (state) => checks.push(state), now });
  return new RouteCache(client, new NegativeAnswers(health, { confirmAfterMs: CONFIRM_MS, now }));
}

/** Route caches that share one judge: what the judge remembers outlives a cached route (kept by real time). */
function sharedJudge() {
  const health = new ResolverHealth(client, { canaries: ['canary.test'], now });
  const negatives = new NegativeAnswers(health, { confirmAfterMs: CONFIRM_MS, now });
  return () => new RouteCache(client, negatives);
}

test("a domain's NXDOMAIN is believed only when a look-up DNS_NXDOMAIN_CONFIRM_MS later says it again", async () => {
  const routes = judge();
  const first = await routes.route('gone.test');
  assert.is(first.kind, 'deferred');
  assert.match(
    (first as { reason: string }).reason,
    /^DNS: gone\.test does not exist \(NXDOMAIN\), first seen 2026-11-28T10:00:00\.000Z; believed only if a look-up after 2026-11-28T10:10:00\.000Z says so again$/,
  );
  clock += CONFIRM_MS - 1000;
  assert.is((await routes.route('gone.test')).kind, 'deferred', 'a second look-up too soon');
  clock += 1000;
  const confirmed = await routes.route('gone.test');
  assert.equal(confirmed, {
    kind: 'undeliverable',
    reason: 'gone.test does not exist (NXDOMAIN)',
    enhancedCode: '5.1.2',
    negative: true,
  });
  // A null MX is a record, not an absence: believed at once.
  assert.is((await routes.route('nullmx.test')).kind, 'undeliverable');
});

test('NXDOMAIN for a domain routed to MX hosts within the hour is not believed', async () => {
  const routesOf = sharedJudge();
  assert.is((await routesOf().route('known.test')).kind, 'hosts');
  dns.zone.mx.delete('known.test');
  dns.zone.a.delete('mx.known.test');
  // Past the route's TTL (60 s) and past the confirmation time: still not believed, the domain had hosts.
  clock += 2 * 60_000;
  const reasons: string[] = [];
  for (let i = 0; i < 3; i++) {
    const route = await routesOf().route('known.test');
    assert.is(route.kind, 'deferred');
    reasons.push((route as { reason: string }).reason);
    clock += CONFIRM_MS;
  }
  assert.match(
    reasons[0],
    /^DNS: known\.test does not exist \(NXDOMAIN\), but known\.test had MX hosts at 2026-11-28T1\d:\d\d:00\.000Z: not believed$/,
  );
});

test('canaries failing: every negative answer and failure names the resolver; an answer makes it healthy again', async () => {
  const checks: ResolverState[] = [];
  const routes = judge(checks);
  dns.zone.mx.delete('canary.test');
  const gone = await routes.route('typo.test');
  assert.equal(gone, {
    kind: 'deferred',
    reason: 'resolver unhealthy: MX of canary.test: NXDOMAIN (typo.test does not exist (NXDOMAIN): not believed)',
  });
  dns.zone.servfail.add('broken.test');
  assert.equal(await routes.route('broken.test'), {
    kind: 'deferred',
    reason: 'resolver unhealthy: MX of canary.test: NXDOMAIN (MX of broken.test: ESERVFAIL)',
  });
  // However long it lasts, an unhealthy resolver's NXDOMAIN is never confirmed.
  clock += 3 * CONFIRM_MS;
  assert.is((await routes.route('typo.test')).kind, 'deferred');
  assert.equal(
    checks.map((state) => state.healthy),
    checks.map(() => false),
  );
  // The resolver answers again: a positive route marks it healthy, the last error kept.
  dns.zone.mx.set('canary.test', [{ exchange: 'mx.canary.test', priority: 10 }]);
  dns.zone.mx.set('back.test', [{ exchange: 'mx.known2.test', priority: 10 }]);
  dns.zone.a.set('mx.known2.test', ['127.0.0.91']);
  assert.is((await routes.route('back.test')).kind, 'hosts');
  const last = checks.at(-1)!;
  assert.is(last.healthy, true);
  assert.is(last.since.getTime(), clock);
  assert.is(last.lastError, 'MX of canary.test: NXDOMAIN');
});

test.run();
