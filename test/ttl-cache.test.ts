// The expiring map behind the DKIM, verified-domain and relay caches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cachedLoad, TtlCache } from '../daemon/ttl-cache.ts';

test('entries expire, a full cache starts over, prefixes are forgotten together', () => {
  let clock = 1_000_000;
  const cache = new TtlCache<string | null>(30, 3, () => clock);
  cache.set('t1 a', 'A');
  cache.set('t1 b', null);
  assert.is(cache.get('t1 a'), 'A');
  assert.is(cache.get('t1 b'), null, 'a kept null is a hit, not a miss');
  assert.is(cache.get('t2 a'), undefined);
  cache.set('t2 a', 'C');
  cache.deletePrefixed('t1 ');
  assert.equal([cache.get('t1 a'), cache.get('t1 b'), cache.get('t2 a')], [undefined, undefined, 'C']);
  cache.set('x', 'x');
  cache.set('y', 'y');
  cache.set('z', 'z');
  assert.is(cache.get('t2 a'), undefined, 'full: emptied before the new entry');
  assert.is(cache.get('z'), 'z');
  clock += 40;
  assert.is(cache.get('z'), undefined, 'expired');
});

test("an entry may have its own time to live, and entries expire by the cache's clock", () => {
  let clock = 1_000_000;
  const cache = new TtlCache<string>(60_000, 10, () => clock);
  cache.set('default', 'kept a minute');
  cache.set('short', 'kept 5 s', 5_000);
  cache.set('long', 'kept an hour', 3_600_000);
  clock += 4_999;
  assert.equal(
    [cache.get('default'), cache.get('short'), cache.get('long')],
    ['kept a minute', 'kept 5 s', 'kept an hour'],
  );
  clock += 1;
  assert.is(cache.get('short'), undefined, 'its own 5 s are up');
  clock += 55_000;
  assert.equal([cache.get('default'), cache.get('long')], [undefined, 'kept an hour']);
  clock += 3_600_000;
  assert.is(cache.get('long'), undefined);
});

test('cachedLoad: misses together share one load; a failed load is not kept', async () => {
  const cache = new TtlCache<Promise<number>>(60_000, 10);
  let loads = 0;
  const load = async () => ++loads;
  const [a, b] = await Promise.all([cachedLoad(cache, 'k', load), cachedLoad(cache, 'k', load)]);
  assert.equal([a, b, loads], [1, 1, 1]);
  const failing = cachedLoad(cache, 'bad', async () => Promise.reject(new Error('down')));
  await failing.catch(() => {});
  await new Promise((resolve) => setImmediate(resolve));
  assert.is(await cachedLoad(cache, 'bad', async () => 7), 7, 'the failure was forgotten');
});

test.run();
