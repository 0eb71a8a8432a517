// Billing (spec §4 "Billing"): admin sessions with tenant context; owners open checkout and portal.
// Stripe's webhook is public and verified by signature over the raw body.
import { Type } from '@sinclair/typebox';
import type { App, AppDeps } from '../../app-types.ts';
import { ServiceUnavailableError } from '../../errors.ts';
import { access } from '../../access.ts';
import { adminIdOf, tenantOf } from '../../access.ts';
import { ErrorBody } from '../../../shared/schemas/common.ts';
import {
  BillingPlan,
  BillingPlanList,
  CheckoutBody,
  PlanSlugParam,
  PortalBody,
  RedirectUrl,
  Subscription,
  UpdateBillingPlanBody,
  WebhookReceipt,
} from '../../../shared/schemas/billing.ts';
import {
  createCheckoutSession,
  createPortalSession,
  getSubscription,
  listPlans,
  updatePlan,
  type StripeBillingDeps,
} from './service.ts';
import { WEBHOOK_NOT_CONFIGURED, createStripeClient, requireStripe } from './stripe-client.ts';
import { applyStripeEvent, verifyStripeEvent } from './webhook.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody };
const provider = { 502: ErrorBody, 503: ErrorBody };

export default async function billingRoutes(app: App, deps: AppDeps): Promise<void> {
  const stripe = createStripeClient(deps.config);
  /** The deps of the services that talk to Stripe; answers 503 while Stripe is not configured. */
  const withStripe = (): StripeBillingDeps => ({ ...deps, stripe: requireStripe(stripe) });
  const tags = ['billing'];

  app.get(
    '/billing/plans',
    {
      config: { access: access.session() },
      schema: {
        tags,
        summary: 'Active plans: monthly email limit, AI token grant, Stripe price id',
        response: { 200: BillingPlanList, ...errors },
      },
    },
    async (request) => listPlans(deps, tenantOf(request), { includeInactive: false }),
  );

  app.patch(
    '/billing/plans/:planSlug',
    {
      config: { access: access.session({ tenant: false, platformAdmin: true }) },
      schema: {
        tags,
        summary: "Set a plan's Stripe price id, AI token grant or availability (platform administrators)",
        params: Type.Object({ planSlug: PlanSlugParam }),
        body: UpdateBillingPlanBody,
        response: { 200: BillingPlan, ...errors, 404: ErrorBody, 409: ErrorBody },
      },
    },
    async (request) =>
      updatePlan(deps, { adminId: adminIdOf(request) }, { slug: request.params.planSlug, body: request.body }),
  );

  app.post(
    '/billing/checkout',
    {
      config: { access: access.session({ role: 'owner' }) },
      schema: {
        tags,
        summary: 'Open a Stripe Checkout session for a plan; redirect the browser to url',
        body: CheckoutBody,
        response: { 200: RedirectUrl, ...errors, 409: ErrorBody, 422: ErrorBody, ...provider },
      },
    },
    async (request) => createCheckoutSession(withStripe(), tenantOf(request), request.body),
  );

  app.post(
    '/billing/portal',
    {
      config: { access: access.session({ role: 'owner' }) },
      // The body is optional: a bare POST (no content type, no bytes) means "no returnUrl".
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        tags,
        summary: 'Open the Stripe Billing Portal; it returns to the dashboard unless returnUrl is given',
        body: PortalBody,
        response: { 200: RedirectUrl, ...errors, 409: ErrorBody, ...provider },
      },
    },
    async (request) => createPortalSession(withStripe(), tenantOf(request), request.body),
  );

  app.get(
    '/billing/subscription',
    {
      config: { access: access.session() },
      schema: {
        tags,
        summary: "The tenant's plan, subscription status and current period",
        response: { 200: Subscription, ...errors, 503: ErrorBody },
      },
    },
    async (request) => {
      requireStripe(stripe);
      return getSubscription(deps, tenantOf(request));
    },
  );

  // Its own scope, so that only this route keeps the body as the exact bytes Stripe signed.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post(
      '/billing/webhook',
      {
        config: { access: access.public() },
        // Stripe's events are a few kilobytes; the body is only read as bytes until its signature holds.
        bodyLimit: 1024 * 1024,
        schema: {
          tags,
          summary:
            'Stripe notifications (checkout.session.completed, invoice.paid, customer.subscription.*), verified by Stripe-Signature',
          headers: Type.Object({ 'stripe-signature': Type.Optional(Type.String()) }),
          response: { 200: WebhookReceipt, 400: ErrorBody, ...provider },
        },
      },
      async (request) => {
        const billing = withStripe();
        if (!deps.config.stripeWebhookSecret)
          throw new ServiceUnavailableError(WEBHOOK_NOT_CONFIGURED, 'BILLING_NOT_CONFIGURED');
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const signature = request.headers['stripe-signature'];
        const event = verifyStripeEvent(
          billing.stripe,
          raw,
          Array.isArray(signature) ? signature[0] : signature,
          deps.config.stripeWebhookSecret,
        );
        return applyStripeEvent(billing, event);
      },
    );
  });
}
