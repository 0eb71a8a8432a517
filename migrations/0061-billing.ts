// Billing: the plan catalogue (seeded; Stripe price ids are set later by a platform admin), each
// tenant's subscription, an AI-token ledger, and the Stripe event ids already processed.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE billing_plans (
      slug text PRIMARY KEY,
      name text NOT NULL,
      monthly_emails integer NOT NULL,
      ai_tokens integer NOT NULL DEFAULT 0,
      stripe_price_id text UNIQUE,
      active boolean NOT NULL DEFAULT true,
      sort_order integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    INSERT INTO billing_plans (slug, name, monthly_emails, ai_tokens, sort_order) VALUES
      ('free', 'Free', 100, 0, 0),
      ('starter', 'Starter', 5000, 100000, 1),
      ('pro', 'Pro', 25000, 500000, 2),
      ('business', 'Business', 100000, 2000000, 3);

    CREATE TABLE subscriptions (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      plan_slug text NOT NULL REFERENCES billing_plans(slug),
      status text NOT NULL,
      stripe_customer_id text,
      stripe_subscription_id text,
      current_period_start timestamptz,
      current_period_end timestamptz,
      cancel_at_period_end boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX subscriptions_customer_idx ON subscriptions (stripe_customer_id);
    CREATE UNIQUE INDEX subscriptions_stripe_subscription_key ON subscriptions (stripe_subscription_id);

    CREATE TABLE ai_token_ledger (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      delta bigint NOT NULL,
      reason text NOT NULL,
      plan_slug text,
      stripe_event_id text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX ai_token_ledger_tenant_idx ON ai_token_ledger (tenant_id, created_at);

    CREATE TABLE billing_events (
      id text PRIMARY KEY,
      type text NOT NULL,
      tenant_id uuid REFERENCES tenants(id) ON DELETE SET NULL,
      outcome text NOT NULL,
      received_at timestamptz NOT NULL DEFAULT now()
    );
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS billing_events, ai_token_ledger, subscriptions, billing_plans CASCADE');
};
