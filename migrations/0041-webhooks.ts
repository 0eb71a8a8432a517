// Outbound webhook endpoints and their deliveries (one row per event × endpoint). The event itself
// lives in the `events` outbox (0040); a delivery copies the payload so that replays and the
// deliveries list do not depend on the outbox being kept forever.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE webhook_endpoints (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      url text NOT NULL,
      events text[] NOT NULL,
      secret_encrypted text NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      consecutive_failures integer NOT NULL DEFAULT 0,
      disabled_reason text,
      disabled_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_endpoints_tenant_idx ON webhook_endpoints (tenant_id, created_at DESC);

    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      event_id uuid REFERENCES events(id) ON DELETE SET NULL,
      event_type text NOT NULL,
      -- json, not jsonb: keeps the key order of the body we sign and send ({ id, type, createdAt, … }).
      payload json NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'skipped')),
      attempt integer NOT NULL DEFAULT 0,
      max_attempts integer NOT NULL DEFAULT 5,
      status_code integer,
      response_body text,
      error text,
      delivered_at timestamptz,
      next_attempt_at timestamptz,
      replay_of uuid REFERENCES webhook_deliveries(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC);
    CREATE INDEX webhook_deliveries_tenant_idx ON webhook_deliveries (tenant_id, created_at DESC);
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS webhook_deliveries, webhook_endpoints CASCADE');
};
