// Stripe's notifications: verified over the raw body, applied once per event id, in one transaction.
import Stripe from 'stripe';
import type { Sequelize, Transaction } from 'sequelize';
import type { StripeBillingDeps } from './service.ts';
import { ValidationError } from '../../errors.ts';
import type { Tenant } from '../tenants/model.ts';
import { modelsOf } from '../models.ts';
import { resetQuotaCycle } from '../quota/service.ts';
import {
  claimBillingEvent,
  grantAiTokens,
  recordBillingOutcome,
  type BillingPlanRow,
  type SubscriptionRow,
} from './model.ts';
import { paymentProviderError } from './stripe-client.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface WebhookReceipt {
  received: true;
  duplicate: boolean;
  handled: boolean;
}

interface Outcome {
  tenantId: string | null;
  outcome: string;
  handled: boolean;
}

const ignored = (why: string, tenantId: string | null = null): Outcome => ({
  tenantId,
  outcome: `ignored: ${why}`,
  handled: false,
});
const idOf = (value: string | { id: string } | null | undefined): string | null =>
  typeof value === 'string' ? value : (value?.id ?? null);
const fromUnix = (seconds: number | null | undefined): Date | null =>
  typeof seconds === 'number' ? new Date(seconds * 1000) : null;

export function verifyStripeEvent(
  stripe: Stripe,
  rawBody: Buffer,
  signature: string | undefined,
  secret: string,
): Stripe.Event {
  try {
    return stripe.webhooks.constructEvent(rawBody, signature ?? '', secret);
  } catch (error) {
    const reason =
      error instanceof Stripe.errors.StripeSignatureVerificationError
        ? error.message
        : 'the body is not a Stripe event';
    throw new ValidationError(`The Stripe-Signature header does not verify: ${reason}`, [
      { field: 'headers.stripe-signature', message: 'does not verify' },
    ]);
  }
}

async function existingTenant(
  sequelize: Sequelize,
  candidate: string | null | undefined,
  transaction: Transaction,
): Promise<string | null> {
  if (!candidate || !UUID.test(candidate)) return null;
  const tenant = await modelsOf(sequelize).Tenant.findByPk(candidate.toLowerCase(), {
    attributes: ['id'],
    transaction,
  });
  return tenant?.id ?? null;
}

/** The plan a subscription bills: its first item's price, else the plan named in our own metadata. */
async function planOf(
  sequelize: Sequelize,
  subscription: Stripe.Subscription | null,
  metadataSlug: string | undefined,
  transaction: Transaction,
): Promise<BillingPlanRow | null> {
  const priceId = subscription?.items.data[0]?.price.id;
  const byPrice = priceId
    ? await modelsOf(sequelize).BillingPlanRow.findOne({ where: { stripePriceId: priceId }, transaction })
    : null;
  return (
    byPrice ?? (metadataSlug ? await modelsOf(sequelize).BillingPlanRow.findByPk(metadataSlug, { transaction }) : null)
  );
}

function periodOf(subscription: Stripe.Subscription | null) {
  const item = subscription?.items.data[0];
  return {
    currentPeriodStart: fromUnix(item?.current_period_start),
    currentPeriodEnd: fromUnix(item?.current_period_end),
  };
}

async function setTenantPlan(
  sequelize: Sequelize,
  tenantId: string,
  plan: string,
  transaction: Transaction,
): Promise<void> {
  await modelsOf(sequelize).Tenant.update({ plan: plan as Tenant['plan'] }, { where: { id: tenantId }, transaction });
}

async function applyCheckoutCompleted(
  sequelize: Sequelize,
  event: Stripe.Event,
  session: Stripe.Checkout.Session,
  subscription: Stripe.Subscription | null,
  transaction: Transaction,
): Promise<Outcome> {
  if (session.mode !== 'subscription') return ignored('not a subscription checkout');
  const tenantId = await existingTenant(
    sequelize,
    session.client_reference_id ?? session.metadata?.tenantId,
    transaction,
  );
  if (!tenantId) return ignored('no tenant of ours in client_reference_id');
  const plan = await planOf(sequelize, subscription, session.metadata?.planSlug, transaction);
  if (!plan) return ignored('the price is not one of our plans', tenantId);
  const fields = {
    planSlug: plan.slug,
    status: subscription?.status ?? 'active',
    stripeCustomerId: idOf(session.customer),
    stripeSubscriptionId: idOf(session.subscription),
    cancelAtPeriodEnd: subscription?.cancel_at_period_end ?? false,
    ...periodOf(subscription),
  };
  await modelsOf(sequelize).SubscriptionRow.upsert({ tenantId, ...fields }, { transaction });
  await setTenantPlan(sequelize, tenantId, plan.slug, transaction);
  await grantAiTokens(
    sequelize,
    { tenantId, tokens: plan.aiTokens, reason: 'checkout', planSlug: plan.slug, stripeEventId: event.id },
    transaction,
  );
  return { tenantId, outcome: `subscribed to ${plan.slug}`, handled: true };
}

async function subscriptionRowFor(
  sequelize: Sequelize,
  stripeSubscriptionId: string | null,
  customerId: string | null,
  transaction: Transaction,
): Promise<SubscriptionRow | null> {
  const bySubscription = stripeSubscriptionId
    ? await modelsOf(sequelize).SubscriptionRow.findOne({ where: { stripeSubscriptionId }, transaction })
    : null;
  return (
    bySubscription ??
    (customerId
      ? await modelsOf(sequelize).SubscriptionRow.findOne({ where: { stripeCustomerId: customerId }, transaction })
      : null)
  );
}

async function applyInvoicePaid(
  sequelize: Sequelize,
  event: Stripe.Event,
  invoice: Stripe.Invoice,
  transaction: Transaction,
): Promise<Outcome> {
  const details = invoice.parent?.subscription_details ?? null;
  const row = await subscriptionRowFor(sequelize, idOf(details?.subscription), idOf(invoice.customer), transaction);
  // The first invoice may arrive before checkout.session.completed: our metadata names the tenant.
  const tenantId = row?.tenantId ?? (await existingTenant(sequelize, details?.metadata?.tenantId, transaction));
  if (!tenantId) return ignored('the invoice belongs to no tenant of ours');
  await resetQuotaCycle(sequelize, tenantId, new Date(event.created * 1000), transaction);
  if (row) {
    const period = invoice.lines.data[0]?.period;
    row.status = 'active';
    if (period) {
      row.currentPeriodStart = fromUnix(period.start);
      row.currentPeriodEnd = fromUnix(period.end);
    }
    await row.save({ transaction });
    if (invoice.billing_reason === 'subscription_cycle') {
      const plan = await modelsOf(sequelize).BillingPlanRow.findByPk(row.planSlug, { transaction });
      if (plan)
        await grantAiTokens(
          sequelize,
          { tenantId, tokens: plan.aiTokens, reason: 'renewal', planSlug: plan.slug, stripeEventId: event.id },
          transaction,
        );
    }
  }
  return { tenantId, outcome: 'quota cycle reset', handled: true };
}

async function applySubscriptionChange(
  sequelize: Sequelize,
  subscription: Stripe.Subscription,
  deleted: boolean,
  transaction: Transaction,
): Promise<Outcome> {
  const row = await subscriptionRowFor(sequelize, subscription.id, idOf(subscription.customer), transaction);
  if (!row) return ignored('unknown subscription');
  if (deleted) {
    row.set({ status: 'canceled', planSlug: 'free', cancelAtPeriodEnd: false });
    await row.save({ transaction });
    await setTenantPlan(sequelize, row.tenantId, 'free', transaction);
    return { tenantId: row.tenantId, outcome: 'subscription ended; back on free', handled: true };
  }
  const plan = await planOf(sequelize, subscription, subscription.metadata?.planSlug, transaction);
  row.set({
    status: subscription.status,
    cancelAtPeriodEnd: subscription.cancel_at_period_end,
    ...periodOf(subscription),
  });
  if (plan) row.planSlug = plan.slug;
  await row.save({ transaction });
  if (plan) await setTenantPlan(sequelize, row.tenantId, plan.slug, transaction);
  return { tenantId: row.tenantId, outcome: `subscription ${subscription.status}`, handled: true };
}

/** Network reads happen before the transaction opens, so no row lock waits on Stripe. */
async function fetchCheckoutSubscription(stripe: Stripe, event: Stripe.Event): Promise<Stripe.Subscription | null> {
  if (event.type !== 'checkout.session.completed') return null;
  const subscriptionId = idOf(event.data.object.subscription);
  if (!subscriptionId) return null;
  try {
    return await stripe.subscriptions.retrieve(subscriptionId);
  } catch (error) {
    throw paymentProviderError(error);
  }
}

/** Stripe calls this, not a user: there is no caller context, the verified event is the input. */
export async function applyStripeEvent(deps: StripeBillingDeps, event: Stripe.Event): Promise<WebhookReceipt> {
  const { stripe } = deps;
  const { sequelize } = deps.db;
  const subscription = await fetchCheckoutSubscription(stripe, event);
  return sequelize.transaction(async (transaction) => {
    if (!(await claimBillingEvent(sequelize, { id: event.id, type: event.type }, transaction))) {
      return { received: true as const, duplicate: true, handled: false };
    }
    // An if-chain, not a switch: Stripe has hundreds of event types and all but four are ignored.
    let outcome: Outcome;
    if (event.type === 'checkout.session.completed') {
      outcome = await applyCheckoutCompleted(sequelize, event, event.data.object, subscription, transaction);
    } else if (event.type === 'invoice.paid') {
      outcome = await applyInvoicePaid(sequelize, event, event.data.object, transaction);
    } else if (event.type === 'customer.subscription.updated') {
      outcome = await applySubscriptionChange(sequelize, event.data.object, false, transaction);
    } else if (event.type === 'customer.subscription.deleted') {
      outcome = await applySubscriptionChange(sequelize, event.data.object, true, transaction);
    } else {
      outcome = ignored(`${event.type} is not used`);
    }
    await recordBillingOutcome(sequelize, event.id, outcome, transaction);
    return { received: true as const, duplicate: false, handled: outcome.handled };
  });
}
