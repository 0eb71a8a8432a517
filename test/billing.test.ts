// Billing through the real stripe library, pointed (STRIPE_API_BASE) at a local stand-in that plays
// Stripe's HTTP API and records what the library sent. Webhooks are signed the way Stripe signs them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { QueryTypes } from 'sequelize';
import { createTestContext, type TestContext } from './helpers/context.ts';
import { addMember, createAdmin, createApiKey, createWorld } from './helpers/fixtures.ts';

const WEBHOOK_SECRET = 'whsec_test_standin_secret';
const PERIOD_START = 1_767_225_600; // 2026-01-01T00:00:00Z
const PERIOD_END = 1_769_904_000; // 2026-02-01T00:00:00Z

interface Recorded {
  method: string;
  path: string;
  authorization: string | undefined;
  form: URLSearchParams;
}

const recorded: Recorded[] = [];
let standIn: Server;
let ctx: TestContext;
const signer = new Stripe('sk_test_signer_only');

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => resolve(body));
  });
}

/** Stripe's API at the HTTP boundary: the few endpoints billing uses, with Stripe-shaped JSON. */
function startStandIn(): Promise<Server> {
  const server = createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const form = new URLSearchParams(await readBody(request));
    recorded.push({
      method: request.method ?? '',
      path: url.pathname,
      authorization: request.headers.authorization,
      form,
    });
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${recorded.length}` });
      response.end(JSON.stringify(body));
    };
    if (request.method === 'POST' && url.pathname === '/v1/checkout/sessions') {
      const price = form.get('line_items[0][price]');
      if (price === 'price_missing') {
        return reply(400, {
          error: {
            type: 'invalid_request_error',
            code: 'resource_missing',
            param: 'line_items[0][price]',
            message: "No such price: 'price_missing'",
          },
        });
      }
      const id = `cs_test_${recorded.length}`;
      return reply(200, {
        id,
        object: 'checkout.session',
        mode: form.get('mode'),
        status: 'open',
        client_reference_id: form.get('client_reference_id'),
        success_url: form.get('success_url'),
        cancel_url: form.get('cancel_url'),
        customer: form.get('customer'),
        customer_email: form.get('customer_email'),
        url: `https://checkout.stripe.com/c/pay/${id}`,
        livemode: false,
      });
    }
    if (request.method === 'POST' && url.pathname === '/v1/billing_portal/sessions') {
      return reply(200, {
        id: 'bps_test_1',
        object: 'billing_portal.session',
        customer: form.get('customer'),
        return_url: form.get('return_url'),
        url: 'https://billing.stripe.com/p/session/test_1',
        livemode: false,
      });
    }
    const subscription = /^\/v1\/subscriptions\/(sub_\w+)$/.exec(url.pathname);
    if (request.method === 'GET' && subscription) {
      return reply(200, {
        id: subscription[1],
        object: 'subscription',
        customer: 'cus_test_1',
        status: 'active',
        cancel_at_period_end: false,
        metadata: {},
        items: {
          object: 'list',
          data: [
            {
              id: 'si_1',
              object: 'subscription_item',
              current_period_start: PERIOD_START,
              current_period_end: PERIOD_END,
              price: { id: 'price_pro_monthly', object: 'price' },
            },
          ],
        },
      });
    }
    return reply(404, {
      error: {
        type: 'invalid_request_error',
        message: `Unrecognized request URL (${request.method}: ${url.pathname})`,
      },
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

test.before(async () => {
  standIn = await startStandIn();
  const port = (standIn.address() as AddressInfo).port;
  ctx = await createTestContext({
    env: {
      STRIPE_SECRET_KEY: 'sk_test_standin',
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: `http://127.0.0.1:${port}`,
    },
  });
});
test.after(async () => {
  await ctx?.close();
  await new Promise((resolve) => standIn?.close(resolve));
});

async function rows<T extends object = Record<string, unknown>>(
  sql: string,
  replacements: Record<string, unknown> = {},
): Promise<T[]> {
  return ctx.db.sequelize.query<T>(sql, { replacements, type: QueryTypes.SELECT });
}

function signed(event: Record<string, unknown>, secret = WEBHOOK_SECRET) {
  const payload = JSON.stringify(event);
  return {
    payload,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': signer.webhooks.generateTestHeaderString({ payload, secret }),
    },
  };
}

function webhook(event: Record<string, unknown>, secret?: string) {
  const { payload, headers } = signed(event, secret);
  return ctx.app.inject({ method: 'POST', url: '/billing/webhook', headers, payload });
}

function stripeEvent(
  id: string,
  type: string,
  object: Record<string, unknown>,
  created = Math.floor(Date.now() / 1000),
) {
  return {
    id,
    object: 'event',
    api_version: '2026-10-28.endive',
    created,
    type,
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    data: { object },
  };
}

async function setPrice(slug: string, stripePriceId: string | null) {
  const platform = await createAdmin(ctx.app, { platformAdmin: true });
  const res = await ctx.app.inject({
    method: 'PATCH',
    url: `/billing/plans/${slug}`,
    headers: { authorization: `Bearer ${platform.token}` },
    payload: { stripePriceId },
  });
  assert.is(res.statusCode, 200, res.body);
  return res.json();
}

test('GET /billing/plans lists the seeded plans; only platform admins set price ids', async () => {
  const { asOwner, owner } = await createWorld(ctx.app);
  const res = await ctx.app.inject({ method: 'GET', url: '/billing/plans', headers: asOwner });
  assert.is(res.statusCode, 200);
  const plans = res.json().data;
  assert.equal(
    plans.map((p: { planSlug: string; monthlyEmailLimit: number }) => [p.planSlug, p.monthlyEmailLimit]),
    [
      ['free', 100],
      ['starter', 5000],
      ['pro', 25000],
      ['business', 100000],
    ],
  );
  assert.ok(plans.every((p: { aiTokenGrant: number }) => Number.isInteger(p.aiTokenGrant)));

  const denied = await ctx.app.inject({
    method: 'PATCH',
    url: '/billing/plans/pro',
    headers: { authorization: `Bearer ${owner.token}` },
    payload: { stripePriceId: 'price_x' },
  });
  assert.is(denied.statusCode, 403);
  const updated = await setPrice('pro', 'price_pro_monthly');
  assert.is(updated.stripePriceId, 'price_pro_monthly');
  const [row] = await rows<{ stripe_price_id: string }>(`SELECT stripe_price_id FROM billing_plans WHERE slug = 'pro'`);
  assert.is(row.stripe_price_id, 'price_pro_monthly');
  const platform = await createAdmin(ctx.app, { platformAdmin: true });
  const bad = await ctx.app.inject({
    method: 'PATCH',
    url: '/billing/plans/pro',
    headers: { authorization: `Bearer ${platform.token}` },
    payload: { stripePriceId: 'not-a-price' },
  });
  assert.is(bad.statusCode, 400);
  const missing = await ctx.app.inject({
    method: 'PATCH',
    url: '/billing/plans/gold',
    headers: { authorization: `Bearer ${platform.token}` },
    payload: { active: false },
  });
  assert.is(missing.statusCode, 404);
});

test('billing refuses API keys and non-owners', async () => {
  const { tenantId, asKey } = await createWorld(ctx.app);
  const keyRes = await ctx.app.inject({
    method: 'GET',
    url: '/billing/plans',
    headers: { ...asKey, 'x-tenant-id': tenantId },
  });
  assert.is(keyRes.statusCode, 403);
  assert.is(keyRes.json().code, 'SESSION_REQUIRED');
  const admin = await createAdmin(ctx.app);
  await addMember(tenantId, admin.id, 'admin');
  const asAdmin = { authorization: `Bearer ${admin.token}`, 'x-tenant-id': tenantId };
  const checkout = await ctx.app.inject({
    method: 'POST',
    url: '/billing/checkout',
    headers: asAdmin,
    payload: { planSlug: 'pro', successUrl: 'https://app.example/ok', cancelUrl: 'https://app.example/no' },
  });
  assert.is(checkout.statusCode, 403);
  assert.is(checkout.json().code, 'ROLE_REQUIRED');
  assert.is((await ctx.app.inject({ method: 'GET', url: '/billing/subscription', headers: asAdmin })).statusCode, 200);
  const stranger = await createAdmin(ctx.app);
  const res = await ctx.app.inject({
    method: 'GET',
    url: '/billing/subscription',
    headers: { authorization: `Bearer ${stranger.token}`, 'x-tenant-id': tenantId },
  });
  assert.is(res.statusCode, 403);
});

test('POST /billing/checkout posts a subscription Checkout Session through the stripe library', async () => {
  await setPrice('pro', 'price_pro_monthly');
  const { tenantId, asOwner, owner } = await createWorld(ctx.app);
  recorded.length = 0;
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/billing/checkout',
    headers: asOwner,
    payload: {
      planSlug: 'pro',
      successUrl: 'https://app.example/billing/ok',
      cancelUrl: 'https://app.example/billing/cancel',
    },
  });
  assert.is(res.statusCode, 200, res.body);
  assert.match(res.json().url, /^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
  assert.is(recorded.length, 1);
  const sent = recorded[0];
  assert.is(sent.method, 'POST');
  assert.is(sent.path, '/v1/checkout/sessions');
  assert.is(sent.authorization, 'Bearer sk_test_standin');
  assert.is(sent.form.get('mode'), 'subscription');
  assert.is(sent.form.get('client_reference_id'), tenantId);
  assert.is(sent.form.get('line_items[0][price]'), 'price_pro_monthly');
  assert.is(sent.form.get('line_items[0][quantity]'), '1');
  assert.is(sent.form.get('success_url'), 'https://app.example/billing/ok');
  assert.is(sent.form.get('cancel_url'), 'https://app.example/billing/cancel');
  assert.is(sent.form.get('customer_email'), owner.email);
  assert.is(sent.form.get('metadata[planSlug]'), 'pro');
  assert.is(sent.form.get('subscription_data[metadata][tenantId]'), tenantId);
});

test('checkout input errors: bad body 400, unknown plan 400, plan without price 422, Stripe refusal 502', async () => {
  const { asOwner } = await createWorld(ctx.app);
  const post = (payload: Record<string, unknown>) =>
    ctx.app.inject({ method: 'POST', url: '/billing/checkout', headers: asOwner, payload });
  const urls = { successUrl: 'https://app.example/ok', cancelUrl: 'https://app.example/no' };
  const bad = await post({ planSlug: 'pro', successUrl: 'not a url', cancelUrl: 'ftp://x' });
  assert.is(bad.statusCode, 400);
  assert.is(bad.json().code, 'VALIDATION_FAILED');
  const unknown = await post({ planSlug: 'platinum', ...urls });
  assert.is(unknown.statusCode, 400);
  assert.is(unknown.json().details[0].field, 'planSlug');
  const free = await post({ planSlug: 'free', ...urls });
  assert.is(free.statusCode, 422);
  assert.is(free.json().code, 'PLAN_NOT_PURCHASABLE');
  await setPrice('business', 'price_missing');
  const refused = await post({ planSlug: 'business', ...urls });
  assert.is(refused.statusCode, 502);
  assert.is(refused.json().code, 'PAYMENT_PROVIDER_ERROR');
  assert.match(refused.json().message, /No such price/);
});

test('POST /billing/portal needs a Stripe customer, then opens a portal returning to the dashboard', async () => {
  const { tenantId, asOwner } = await createWorld(ctx.app);
  const none = await ctx.app.inject({ method: 'POST', url: '/billing/portal', headers: asOwner });
  assert.is(none.statusCode, 409);
  assert.is(none.json().code, 'NO_BILLING_CUSTOMER');
  await ctx.db.sequelize.query(
    `INSERT INTO subscriptions (tenant_id, plan_slug, status, stripe_customer_id, stripe_subscription_id) VALUES (:tenantId, 'pro', 'active', 'cus_portal', 'sub_portal')`,
    { replacements: { tenantId } },
  );
  recorded.length = 0;
  const res = await ctx.app.inject({ method: 'POST', url: '/billing/portal', headers: asOwner });
  assert.is(res.statusCode, 200, res.body);
  assert.is(res.json().url, 'https://billing.stripe.com/p/session/test_1');
  assert.is(recorded[0].path, '/v1/billing_portal/sessions');
  assert.is(recorded[0].form.get('customer'), 'cus_portal');
  assert.is(recorded[0].form.get('return_url'), `${ctx.config.publicUrl}/dashboard`);
  const custom = await ctx.app.inject({
    method: 'POST',
    url: '/billing/portal',
    headers: asOwner,
    payload: { returnUrl: 'https://app.example/back' },
  });
  assert.is(custom.statusCode, 200);
  assert.is(recorded[1].form.get('return_url'), 'https://app.example/back');
  const again = await ctx.app.inject({
    method: 'POST',
    url: '/billing/checkout',
    headers: asOwner,
    payload: { planSlug: 'pro', successUrl: 'https://a.example/', cancelUrl: 'https://a.example/' },
  });
  assert.is(again.statusCode, 409, 'an active subscription changes plan in the portal');
});

test('webhook: bad or missing signature is refused and changes nothing', async () => {
  const { tenantId } = await createWorld(ctx.app);
  const event = stripeEvent('evt_badsig', 'checkout.session.completed', {
    id: 'cs_x',
    object: 'checkout.session',
    mode: 'subscription',
    client_reference_id: tenantId,
  });
  const wrong = await webhook(event, 'whsec_someone_else');
  assert.is(wrong.statusCode, 400);
  assert.is(wrong.json().code, 'VALIDATION_FAILED');
  const unsigned = await ctx.app.inject({
    method: 'POST',
    url: '/billing/webhook',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(event),
  });
  assert.is(unsigned.statusCode, 400);
  const { payload, headers } = signed(event);
  const tampered = await ctx.app.inject({
    method: 'POST',
    url: '/billing/webhook',
    headers,
    payload: payload.replace('cs_x', 'cs_y'),
  });
  assert.is(tampered.statusCode, 400);
  assert.equal(await rows(`SELECT id FROM billing_events WHERE id = 'evt_badsig'`), []);
});

test('webhook: checkout.session.completed activates the subscription, sets the plan, grants AI tokens, once', async () => {
  await setPrice('pro', 'price_pro_monthly');
  const { tenantId, asOwner } = await createWorld(ctx.app);
  recorded.length = 0;
  const event = stripeEvent('evt_checkout_1', 'checkout.session.completed', {
    id: 'cs_test_done',
    object: 'checkout.session',
    mode: 'subscription',
    status: 'complete',
    payment_status: 'paid',
    client_reference_id: tenantId,
    customer: 'cus_test_1',
    subscription: 'sub_test_1',
    metadata: { tenantId, planSlug: 'pro' },
  });
  const res = await webhook(event);
  assert.is(res.statusCode, 200, res.body);
  assert.equal(res.json(), { received: true, duplicate: false, handled: true });
  assert.is(recorded[0].method, 'GET');
  assert.is(recorded[0].path, '/v1/subscriptions/sub_test_1');

  const [tenant] = await rows<{ plan: string }>('SELECT plan FROM tenants WHERE id = :tenantId', { tenantId });
  assert.is(tenant.plan, 'pro');
  const [sub] = await rows<{
    plan_slug: string;
    status: string;
    stripe_customer_id: string;
    stripe_subscription_id: string;
  }>(
    'SELECT plan_slug, status, stripe_customer_id, stripe_subscription_id FROM subscriptions WHERE tenant_id = :tenantId',
    { tenantId },
  );
  assert.equal(sub, {
    plan_slug: 'pro',
    status: 'active',
    stripe_customer_id: 'cus_test_1',
    stripe_subscription_id: 'sub_test_1',
  });
  const ledger = await rows<{ delta: string | number; reason: string; stripe_event_id: string }>(
    'SELECT delta, reason, stripe_event_id FROM ai_token_ledger WHERE tenant_id = :tenantId',
    { tenantId },
  );
  assert.equal(
    ledger.map((l) => ({ ...l, delta: Number(l.delta) })),
    [{ delta: 500000, reason: 'checkout', stripe_event_id: 'evt_checkout_1' }],
  );

  const view = await ctx.app.inject({ method: 'GET', url: '/billing/subscription', headers: asOwner });
  assert.equal(view.json(), {
    planSlug: 'pro',
    status: 'active',
    currentPeriodStart: new Date(PERIOD_START * 1000).toISOString(),
    currentPeriodEnd: new Date(PERIOD_END * 1000).toISOString(),
    cancelAtPeriodEnd: false,
    aiTokenBalance: 500000,
  });

  const duplicate = await webhook(event);
  assert.equal(duplicate.json(), { received: true, duplicate: true, handled: false });
  assert.is(
    (await rows('SELECT id FROM ai_token_ledger WHERE tenant_id = :tenantId', { tenantId })).length,
    1,
    'no second grant',
  );
});

test("webhook: invoice.paid starts a new quota cycle; a renewal grants the month's tokens", async () => {
  const { tenantId } = await createWorld(ctx.app);
  await ctx.db.sequelize.query(
    `INSERT INTO subscriptions (tenant_id, plan_slug, status, stripe_customer_id, stripe_subscription_id) VALUES (:tenantId, 'starter', 'past_due', 'cus_inv', 'sub_inv')`,
    { replacements: { tenantId } },
  );
  const created = Math.floor(Date.now() / 1000) - 60;
  const invoice = (id: string, reason: string) => ({
    id,
    object: 'invoice',
    customer: 'cus_inv',
    billing_reason: reason,
    status: 'paid',
    parent: { type: 'subscription_details', subscription_details: { subscription: 'sub_inv', metadata: { tenantId } } },
    lines: {
      object: 'list',
      data: [{ id: 'il_1', object: 'line_item', period: { start: PERIOD_START, end: PERIOD_END } }],
    },
  });
  const res = await webhook(
    stripeEvent('evt_invoice_1', 'invoice.paid', invoice('in_1', 'subscription_cycle'), created),
  );
  assert.is(res.statusCode, 200, res.body);
  assert.is(res.json().handled, true);
  const [cycle] = await rows<{ started_at: Date }>('SELECT started_at FROM quota_cycles WHERE tenant_id = :tenantId', {
    tenantId,
  });
  assert.is(new Date(cycle.started_at).getTime(), created * 1000);
  const [sub] = await rows<{ status: string; current_period_end: Date }>(
    'SELECT status, current_period_end FROM subscriptions WHERE tenant_id = :tenantId',
    { tenantId },
  );
  assert.is(sub.status, 'active');
  assert.is(new Date(sub.current_period_end).getTime(), PERIOD_END * 1000);
  const ledger = await rows<{ delta: string | number; reason: string }>(
    'SELECT delta, reason FROM ai_token_ledger WHERE tenant_id = :tenantId',
    { tenantId },
  );
  assert.equal(
    ledger.map((l) => ({ ...l, delta: Number(l.delta) })),
    [{ delta: 100000, reason: 'renewal' }],
  );

  const later = await webhook(
    stripeEvent('evt_invoice_2', 'invoice.paid', invoice('in_2', 'subscription_update'), created + 30),
  );
  assert.is(later.statusCode, 200);
  const [moved] = await rows<{ started_at: Date }>('SELECT started_at FROM quota_cycles WHERE tenant_id = :tenantId', {
    tenantId,
  });
  assert.is(new Date(moved.started_at).getTime(), (created + 30) * 1000);
  assert.is(
    (await rows('SELECT id FROM ai_token_ledger WHERE tenant_id = :tenantId', { tenantId })).length,
    1,
    'only cycle renewals grant tokens',
  );

  const stranger = await webhook(
    stripeEvent('evt_invoice_3', 'invoice.paid', {
      ...invoice('in_3', 'subscription_cycle'),
      customer: 'cus_nobody',
      parent: null,
    }),
  );
  assert.equal(stranger.json(), { received: true, duplicate: false, handled: false });
  const [outcome] = await rows<{ outcome: string }>(`SELECT outcome FROM billing_events WHERE id = 'evt_invoice_3'`);
  assert.match(outcome.outcome, /^ignored/);
});

test('webhook: customer.subscription.deleted puts the tenant back on free', async () => {
  const { tenantId } = await createWorld(ctx.app);
  await ctx.db.sequelize.query(`UPDATE tenants SET plan = 'pro' WHERE id = :tenantId`, { replacements: { tenantId } });
  await ctx.db.sequelize.query(
    `INSERT INTO subscriptions (tenant_id, plan_slug, status, stripe_customer_id, stripe_subscription_id) VALUES (:tenantId, 'pro', 'active', 'cus_del', 'sub_del')`,
    { replacements: { tenantId } },
  );
  const res = await webhook(
    stripeEvent('evt_sub_deleted', 'customer.subscription.deleted', {
      id: 'sub_del',
      object: 'subscription',
      customer: 'cus_del',
      status: 'canceled',
      cancel_at_period_end: false,
      metadata: {},
      items: { object: 'list', data: [] },
    }),
  );
  assert.is(res.json().handled, true);
  const [tenant] = await rows<{ plan: string }>('SELECT plan FROM tenants WHERE id = :tenantId', { tenantId });
  assert.is(tenant.plan, 'free');
});

test('an API key cannot reach billing even with every scope', async () => {
  const { tenantId } = await createWorld(ctx.app);
  const key = await createApiKey(tenantId);
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/billing/portal',
    headers: { authorization: `Bearer ${key.key}` },
  });
  assert.is(res.statusCode, 403);
});

test.run();
