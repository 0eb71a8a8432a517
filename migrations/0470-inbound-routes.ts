// Inbound routing (issue 52, docs/inbound.md): a tenant's ordered routes, its token address on the
// platform inbound domain, and the domains it receives on (verified by their MX). Every change to
// any of them is announced on `svc_inbound_routes` (a trigger: no writer can forget it), so each SMTP
// node drops the routes it cached for RCPT TO (modules/inbound-routing/route-cache.ts).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE inbound_routes (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      position integer NOT NULL,
      match_address text NOT NULL,
      action text NOT NULL CHECK (action IN ('webhook', 'forward', 'store', 'refuse')),
      endpoint_id uuid REFERENCES webhook_endpoints(id) ON DELETE SET NULL,
      forward_to text,
      refuse_message text,
      enabled boolean NOT NULL DEFAULT true,
      description text,
      max_inline_attachment_bytes integer NOT NULL DEFAULT 262144,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX inbound_routes_tenant_idx ON inbound_routes (tenant_id, position, created_at);
    CREATE INDEX inbound_routes_domain_idx ON inbound_routes (lower(split_part(match_address, '@', 2)));

    CREATE TABLE inbound_addresses (
      tenant_id uuid PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
      token text NOT NULL UNIQUE,
      rotated_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE inbound_domains (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'verified')),
      mx_found text[] NOT NULL DEFAULT '{}',
      explanation text,
      checked_at timestamptz,
      verified_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (tenant_id, name)
    );
    -- One tenant receives on a domain: the first to prove its MX.
    CREATE UNIQUE INDEX inbound_domains_verified_idx ON inbound_domains (name) WHERE status = 'verified';

    CREATE FUNCTION svc_notify_inbound_routes() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE changed record;
    BEGIN
      IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
      PERFORM pg_notify('svc_inbound_routes', changed.tenant_id::text);
      RETURN NULL;
    END $$;
    CREATE TRIGGER inbound_routes_notify AFTER INSERT OR UPDATE OR DELETE ON inbound_routes
      FOR EACH ROW EXECUTE FUNCTION svc_notify_inbound_routes();
    CREATE TRIGGER inbound_addresses_notify AFTER INSERT OR UPDATE OR DELETE ON inbound_addresses
      FOR EACH ROW EXECUTE FUNCTION svc_notify_inbound_routes();
    CREATE TRIGGER inbound_domains_notify AFTER INSERT OR UPDATE OR DELETE ON inbound_domains
      FOR EACH ROW EXECUTE FUNCTION svc_notify_inbound_routes();`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    DROP TABLE IF EXISTS inbound_domains, inbound_addresses, inbound_routes;
    DROP FUNCTION IF EXISTS svc_notify_inbound_routes();`);
};
