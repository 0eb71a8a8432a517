// Billing (Stripe): plans, the tenant's subscription, and the checkout and portal links a person opens.
import type { SvcClient } from '../client.ts';
import type { BillingPlan, Subscription, UpdateBillingPlanBody } from '../../shared/schemas/billing.ts';

export const billing = {
  plans: (client: SvcClient) => client.http.request<{ data: BillingPlan[] }>('GET', '/billing/plans'),
  updatePlan: (client: SvcClient, slug: string, changes: UpdateBillingPlanBody) =>
    client.http.request<BillingPlan>('PATCH', `/billing/plans/${encodeURIComponent(slug)}`, { json: changes }),
  subscription: (client: SvcClient) => client.http.request<Subscription>('GET', '/billing/subscription'),
  checkout: (client: SvcClient, body: { planSlug: string; successUrl: string; cancelUrl: string }) =>
    client.http.request<{ url: string }>('POST', '/billing/checkout', { json: body }),
  portal: (client: SvcClient, returnUrl?: string) =>
    client.http.request<{ url: string }>('POST', '/billing/portal', { json: returnUrl ? { returnUrl } : {} }),
};
