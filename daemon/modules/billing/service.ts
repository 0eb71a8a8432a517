// Billing rules: the plan catalogue, Stripe Checkout and Billing Portal sessions, the subscription view.
import type Stripe from 'stripe';
import type { AppDeps } from '../../app-types.ts';
import { ConflictError, NotFoundError, UnprocessableError, ValidationError } from '../../errors.ts';
import type { AdminContext, TenantContext } from '../../context.ts';
import { modelsOf } from '../models.ts';
import type {
  BillingPlan,
  CheckoutBody,
  PortalBody,
  Subscription,
  UpdateBillingPlanBody,
} from '../../../shared/schemas/billing.ts';
import { aiTokenBalance, type BillingPlanRow } from './model.ts';
import { paymentProviderError } from './stripe-client.ts';

/** A subscription in one of these states already bills the tenant: plan changes go through the portal. */
const LIVE_STATUSES = new Set(['active', 'trialing', 'past_due', 'unpaid', 'incomplete', 'paused']);

function toPlan(row: BillingPlanRow): BillingPlan {
  return {
    planSlug: row.slug,
    name: row.name,
    monthlyEmailLimit: row.monthlyEmails,
    aiTokenGrant: row.aiTokens,
    stripePriceId: row.stripePriceId ?? null,
    active: row.active,
  };
}

export type BillingDeps = Pick<AppDeps, 'db' | 'config'>;
/** The checkout and portal services need Stripe; the route hands it over only once it is configured. */
export type StripeBillingDeps = BillingDeps & { stripe: Stripe };

export async function listPlans(
  deps: BillingDeps,
  _ctx: TenantContext,
  options: { includeInactive: boolean },
): Promise<{ data: BillingPlan[] }> {
  const rows = await modelsOf(deps.db.sequelize).BillingPlanRow.findAll({
    where: options.includeInactive ? {} : { active: true },
    order: [
      ['sortOrder', 'ASC'],
      ['slug', 'ASC'],
    ],
  });
  return { data: rows.map(toPlan) };
}

export async function updatePlan(
  deps: BillingDeps,
  _ctx: AdminContext,
  input: { slug: string; body: UpdateBillingPlanBody },
): Promise<BillingPlan> {
  const { slug, body } = input;
  const row = await modelsOf(deps.db.sequelize).BillingPlanRow.findByPk(slug);
  if (!row) throw new NotFoundError(`Plan "${slug}"`);
  if (body.stripePriceId) {
    const other = await modelsOf(deps.db.sequelize).BillingPlanRow.findOne({
      where: { stripePriceId: body.stripePriceId },
    });
    if (other && other.slug !== slug)
      throw new ConflictError(
        `The price ${body.stripePriceId} is already the price of the ${other.slug} plan.`,
        'PRICE_IN_USE',
      );
  }
  if (body.stripePriceId !== undefined) row.stripePriceId = body.stripePriceId;
  if (body.aiTokenGrant !== undefined) row.aiTokens = body.aiTokenGrant;
  if (body.active !== undefined) row.active = body.active;
  await row.save();
  return toPlan(row);
}

export async function createCheckoutSession(
  deps: StripeBillingDeps,
  ctx: TenantContext,
  body: CheckoutBody,
): Promise<{ url: string }> {
  const { stripe } = deps;
  const plan = await modelsOf(deps.db.sequelize).BillingPlanRow.findByPk(body.planSlug);
  if (!plan || !plan.active) {
    throw new ValidationError(`There is no plan "${body.planSlug}"; GET /billing/plans lists them.`, [
      { field: 'planSlug', message: 'is not an active plan' },
    ]);
  }
  if (!plan.stripePriceId) {
    throw new UnprocessableError(
      `The ${plan.slug} plan has no Stripe price, so it cannot be bought; a platform administrator sets it with PATCH /billing/plans/${plan.slug}.`,
      'PLAN_NOT_PURCHASABLE',
    );
  }
  const current = await modelsOf(deps.db.sequelize).SubscriptionRow.findByPk(ctx.tenantId);
  if (current && current.stripeSubscriptionId && LIVE_STATUSES.has(current.status)) {
    throw new ConflictError(
      'This tenant already has a subscription; change or cancel it in the billing portal (POST /billing/portal).',
      'SUBSCRIPTION_EXISTS',
    );
  }
  const admin = ctx.adminId
    ? await modelsOf(deps.db.sequelize).Admin.findByPk(ctx.adminId, { attributes: ['email'] })
    : null;
  const metadata = { tenantId: ctx.tenantId, planSlug: plan.slug };
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      line_items: [{ price: plan.stripePriceId, quantity: 1 }],
      success_url: body.successUrl,
      cancel_url: body.cancelUrl,
      client_reference_id: ctx.tenantId,
      ...(current?.stripeCustomerId
        ? { customer: current.stripeCustomerId }
        : admin
          ? { customer_email: admin.email }
          : {}),
      metadata,
      subscription_data: { metadata },
    });
  } catch (error) {
    throw paymentProviderError(error);
  }
  if (!session.url) throw paymentProviderError(new Error('checkout session without url'));
  return { url: session.url };
}

export async function createPortalSession(
  deps: StripeBillingDeps,
  ctx: TenantContext,
  body: PortalBody,
): Promise<{ url: string }> {
  const { stripe } = deps;
  const dashboardUrl = `${deps.config.publicUrl}/dashboard`;
  const current = await modelsOf(deps.db.sequelize).SubscriptionRow.findByPk(ctx.tenantId);
  if (!current?.stripeCustomerId) {
    throw new ConflictError(
      'This tenant has no Stripe customer yet: subscribe first with POST /billing/checkout.',
      'NO_BILLING_CUSTOMER',
    );
  }
  try {
    const session = await stripe.billingPortal.sessions.create({
      customer: current.stripeCustomerId,
      return_url: body.returnUrl ?? dashboardUrl,
    });
    return { url: session.url };
  } catch (error) {
    throw paymentProviderError(error);
  }
}

export async function getSubscription(deps: BillingDeps, ctx: TenantContext): Promise<Subscription> {
  const { sequelize } = deps.db;
  const [row, tenant, balance] = await Promise.all([
    modelsOf(deps.db.sequelize).SubscriptionRow.findByPk(ctx.tenantId),
    modelsOf(deps.db.sequelize).Tenant.findByPk(ctx.tenantId, { attributes: ['plan'] }),
    aiTokenBalance(sequelize, ctx.tenantId),
  ]);
  return {
    planSlug: row?.planSlug ?? tenant?.plan ?? 'free',
    status: row?.status ?? 'none',
    currentPeriodStart: row?.currentPeriodStart?.toISOString() ?? null,
    currentPeriodEnd: row?.currentPeriodEnd?.toISOString() ?? null,
    cancelAtPeriodEnd: row?.cancelAtPeriodEnd ?? false,
    aiTokenBalance: balance,
  };
}
