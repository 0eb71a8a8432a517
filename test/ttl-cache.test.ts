// The expiring map behind the DKIM, verified-domain and relay caches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cachedLoad, TtlCache } from '../daemon/ttl-cache.ts';

test('entries expire, a full cache starts over, prefixes are forgotten together', async () => {
  const cache = new TtlCache<string | null>(30, 3);
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
  await new Promise((resolve) => setTimeout(resolve, 40));
  assert.is(cache.get('z'), undefined, 'expired');
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
