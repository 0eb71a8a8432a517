// shared/webhooks.ts on its own: generated secrets, both signature schemes, and the verifier's
// refusals (tampered body, wrong secret, stale timestamp, malformed header).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import {
  generateWebhookSecret,
  signStandardWebhook,
  signWebhookPayload,
  verifyWebhookSignature,
  WebhookSignatureError,
} from '../shared/webhooks.ts';

const stripe = new Stripe('sk_test_unused');
const payload = JSON.stringify({ id: '9b2f4f3e-0d7e-4c8c-9a53-1f3f7f1f0c11', type: 'email.sent', data: { n: 1 } });

test('generated secrets are whsec_ + 32 random bytes in base64url', () => {
  const a = generateWebhookSecret();
  const b = generateWebhookSecret();
  assert.match(a, /^whsec_[A-Za-z0-9_-]{43}$/);
  assert.is(Buffer.from(a.slice(6), 'base64url').length, 32);
  assert.is.not(a, b);
});

test("X-Service-Signature is Stripe's scheme: stripe.webhooks.constructEvent accepts it", () => {
  const secret = generateWebhookSecret();
  const now = Math.floor(Date.now() / 1000);
  const header = signWebhookPayload({ payload, secret, timestamp: now });
  assert.is(header, `t=${now},v1=${createHmac('sha256', secret).update(`${now}.${payload}`).digest('hex')}`);
  assert.is(stripe.webhooks.constructEvent(payload, header, secret).type, 'email.sent');
  assert.equal(verifyWebhookSignature({ payload: Buffer.from(payload), header, secret }), JSON.parse(payload));
});

test('the verifier refuses tampering, a wrong secret, a stale timestamp and a malformed header', () => {
  const secret = generateWebhookSecret();
  const now = 1_700_000_000;
  const header = signWebhookPayload({ payload, secret, timestamp: now });
  const refuse = (options: Parameters<typeof verifyWebhookSignature>[0]) => {
    try {
      verifyWebhookSignature(options);
      assert.unreachable('should have thrown');
    } catch (error) {
      assert.instance(error, WebhookSignatureError);
    }
  };
  refuse({ payload: payload.replace('"n":1', '"n":2'), header, secret, now });
  refuse({ payload, header, secret: generateWebhookSecret(), now });
  refuse({ payload, header, secret, now: now + 301 });
  refuse({ payload, header: 'v1=abc', secret, now });
  refuse({ payload, header: undefined, secret, now });
  // Within tolerance, with a second (rotated) v1 present, or with the check switched off: accepted.
  verifyWebhookSignature({ payload, header, secret, now: now + 299 });
  verifyWebhookSignature({ payload, header: `${header},v1=${'0'.repeat(64)}`, secret, now });
  verifyWebhookSignature({ payload, header, secret, now: now + 10_000, toleranceSeconds: 0 });
});

test('Standard Webhooks signature: keyed with the decoded bytes after whsec_ (base64url accepted)', () => {
  const secret = generateWebhookSecret();
  const signature = signStandardWebhook({ id: 'msg_1', payload, secret, timestamp: 1_700_000_000 });
  const key = Buffer.from(secret.slice(6), 'base64url');
  assert.is(signature, `v1,${createHmac('sha256', key).update(`msg_1.1700000000.${payload}`).digest('base64')}`);
  // A user-chosen secret without the prefix is used as its UTF-8 bytes.
  const plain = signStandardWebhook({ id: 'msg_1', payload, secret: 'my-own-secret-123456', timestamp: 1 });
  assert.is(plain, `v1,${createHmac('sha256', 'my-own-secret-123456').update(`msg_1.1.${payload}`).digest('base64')}`);
});

test.run();
