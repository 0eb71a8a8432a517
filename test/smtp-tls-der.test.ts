// The self-signed certificate's DER: INTEGERs in minimal form whatever the random serial is. A
// serial starting with 0x00 once made OpenSSL refuse the certificate ("illegal padding"), about one
// boot in 256 (CI failed on it in smtp-submission-boot).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { derUnsignedInteger, selfSignedPair } from '../daemon/smtp/tls.ts';

const hex = (bytes: number[]) => derUnsignedInteger(Buffer.from(bytes)).toString('hex');

test('INTEGERs: leading zeros dropped, one 0 put back only before a set sign bit', () => {
  assert.is(hex([0x02]), '020102');
  assert.is(hex([0x00]), '020100');
  assert.is(hex([0x00, 0x00]), '020100');
  assert.is(hex([0x00, 0x05]), '020105');
  assert.is(hex([0x00, 0x00, 0x85]), '02020085');
  assert.is(hex([0x80]), '02020080');
  assert.is(hex([0x7f, 0xff]), '02027fff');
});

test('a serial starting with zero bytes, or with the sign bit set, gives a certificate OpenSSL loads', () => {
  for (const first of [[0x00, 0x01], [0x00, 0x00, 0x7f], [0x00, 0x80], [0xff]]) {
    const serial = Buffer.concat([Buffer.from(first), Buffer.alloc(16 - first.length, 0x11)]);
    const pair = selfSignedPair('smtp.der.test', new Date(), serial);
    const cert = new X509Certificate(pair.cert);
    assert.is(cert.subject, 'CN=smtp.der.test');
    assert.ok(cert.checkPrivateKey(createPrivateKey(pair.key)));
    assert.is(BigInt('0x' + cert.serialNumber), BigInt('0x' + serial.toString('hex')), `serial ${first}`);
    createSecureContext({ cert: pair.cert, key: pair.key });
  }
});

test.run();
