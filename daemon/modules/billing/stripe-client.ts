// The one place the daemon builds its Stripe client and turns Stripe's failures into API errors.
import Stripe from 'stripe';
import type { Config } from '../../config.ts';
import { ApiError, ServiceUnavailableError } from '../../errors.ts';

export const BILLING_NOT_CONFIGURED = 'billing is not configured: set STRIPE_SECRET_KEY';
export const WEBHOOK_NOT_CONFIGURED = 'billing webhooks are not configured: set STRIPE_WEBHOOK_SECRET';

/** Null when STRIPE_SECRET_KEY is unset. STRIPE_API_BASE points the client at another host (a local stand-in). */
export function createStripeClient(config: Config): Stripe | null {
  if (!config.stripeSecretKey) return null;
  const base = config.stripeApiBase ? new URL(config.stripeApiBase) : null;
  const protocol = base?.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(config.stripeSecretKey, {
    maxNetworkRetries: 1,
    timeout: 20_000,
    telemetry: false,
    appInfo: { name: 'svc-email' },
    ...(base ? { host: base.hostname, port: base.port || (protocol === 'http' ? 80 : 443), protocol } : {}),
  });
}

export function requireStripe(stripe: Stripe | null): Stripe {
  if (!stripe) throw new ServiceUnavailableError(BILLING_NOT_CONFIGURED, 'BILLING_NOT_CONFIGURED');
  return stripe;
}

/** Stripe refused the request (502, its sentence kept: it names the bad price or customer) or could not be reached (503). */
export function paymentProviderError(error: unknown): ApiError {
  if (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAPIError ||
    error instanceof Stripe.errors.StripeRateLimitError
  ) {
    return new ServiceUnavailableError(
      'The payment provider could not be reached; try again shortly.',
      'PAYMENT_PROVIDER_UNAVAILABLE',
    );
  }
  if (
    error instanceof Stripe.errors.StripeAuthenticationError ||
    error instanceof Stripe.errors.StripePermissionError
  ) {
    return new ApiError(
      502,
      'PAYMENT_PROVIDER_ERROR',
      'The payment provider refused the configured STRIPE_SECRET_KEY.',
    );
  }
  if (error instanceof Stripe.errors.StripeError) {
    return new ApiError(502, 'PAYMENT_PROVIDER_ERROR', `The payment provider refused the request: ${error.message}`);
  }
  throw error;
}
