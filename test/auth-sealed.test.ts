import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { seal, unseal, isSealed, SealedDataError } from '../daemon/crypto/sealed.ts';

const key = randomBytes(32);

test('seal then unseal gives the plaintext back; the sealed text does not contain it', () => {
  const sealed = seal(key, 'JBSWY3DPEHPK3PXP');
  assert.ok(isSealed(sealed));
  assert.not.match(sealed, /JBSWY3DPEHPK3PXP/);
  assert.is(unseal(key, sealed), 'JBSWY3DPEHPK3PXP');
});

test('two seals of the same text differ (random IV)', () => {
  assert.is.not(seal(key, 'x'), seal(key, 'x'));
});

test('a tampered value or another key is refused', () => {
  const sealed = seal(key, 'secret');
  const parts = sealed.split('.');
  const data = Buffer.from(parts[3], 'base64url');
  data[0] ^= 1;
  parts[3] = data.toString('base64url');
  assert.throws(
    () => unseal(key, parts.join('.')),
    (e: unknown) => e instanceof SealedDataError,
  );
  assert.throws(
    () => unseal(randomBytes(32), sealed),
    (e: unknown) => e instanceof SealedDataError,
  );
  assert.throws(
    () => unseal(key, 'plain'),
    (e: unknown) => e instanceof SealedDataError,
  );
  assert.throws(
    () => seal(randomBytes(16), 'x'),
    (e: unknown) => e instanceof SealedDataError,
  );
});

test.run();
