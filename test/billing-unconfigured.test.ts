// Billing with no STRIPE_* settings: a clear 503, except the plan catalogue.
// (A separate file: models bind to one database per process.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { createWorld } from './helpers/fixtures.ts';

let bare: TestContext;
test.before(async () => {
  bare = await createTestContext();
});
test.after(async () => {
  await bare?.close();
});

test('without STRIPE_SECRET_KEY billing routes answer 503; plans still list', async () => {
  const { asOwner } = await createWorld(bare.app);
  const plans = await bare.app.inject({ method: 'GET', url: '/billing/plans', headers: asOwner });
  assert.is(plans.statusCode, 200);
  const calls = [
    {
      method: 'POST' as const,
      url: '/billing/checkout',
      payload: { planSlug: 'pro', successUrl: 'https://a.example/', cancelUrl: 'https://a.example/' },
    },
    { method: 'POST' as const, url: '/billing/portal' },
    { method: 'GET' as const, url: '/billing/subscription' },
  ];
  for (const call of calls) {
    const res = await bare.app.inject({ ...call, headers: asOwner });
    assert.is(res.statusCode, 503, call.url);
    assert.is(res.json().message, 'billing is not configured: set STRIPE_SECRET_KEY');
  }
  const hook = await bare.app.inject({
    method: 'POST',
    url: '/billing/webhook',
    headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=x' },
    payload: '{}',
  });
  assert.is(hook.statusCode, 503);
  assert.is(hook.json().code, 'BILLING_NOT_CONFIGURED');
});

test.run();
