// The send thread's random bytes (mail/random-pool.ts): what it hands out is never handed out again,
// requests across a block's end start a new block, and a link token sealed with its IV opens.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { createRandomPool } from '../daemon/mail/random-pool.ts';
import { readLinkToken, signLinkToken } from '../daemon/mail/link-tokens.ts';

test('slices are fresh: 20,000 IVs of 12 bytes are all different, and a kept slice is never overwritten', () => {
  const take = createRandomPool(100);
  const first = take(12);
  const kept = Buffer.from(first);
  const seen = new Set<string>();
  for (let i = 0; i < 20_000; i++) {
    const iv = take(12);
    assert.is(iv.length, 12);
    seen.add(iv.toString('hex'));
  }
  assert.is(seen.size, 20_000);
  assert.equal(first, kept, 'a slice handed out earlier keeps its bytes');
});

test('a request larger than a block gets bytes of its own; sizes that do not divide the block leave no gap reused', () => {
  const take = createRandomPool(16);
  assert.is(take(40).length, 40);
  const a = take(10);
  const b = take(10);
  assert.is(a.length, 10);
  assert.is(b.length, 10);
  assert.ok(a.buffer !== b.buffer || a.byteOffset + a.length <= b.byteOffset, 'the two slices do not overlap');
});

test('a link token sealed with the pool opens, and two tokens of the same content differ', () => {
  const key = randomBytes(32);
  const take = createRandomPool();
  const token = { k: 'o', e: '00000000-0000-4000-8000-000000000001' } as const;
  const one = signLinkToken(key, token, take);
  const two = signLinkToken(key, token, take);
  assert.is.not(one, two);
  assert.equal(readLinkToken(key, one, 'o'), token);
  assert.equal(readLinkToken(key, two, 'o'), token);
});

test.run();
