// What reactions did (issue 29): a provider (or one destination of it) suspended or slowed until a
// time, or a tenant paused (until = null: until an owner resumes sending). Every MTA loop reads the
// active rows; `svc providers` and the queue view list them (daemon/mta/sql/reactions.ts).
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE mta_provider_suspensions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      provider_key text NOT NULL,
      -- Null: every destination of the provider.
      domain text,
      kind text NOT NULL CHECK (kind IN ('suspend', 'slow', 'pause_tenant')),
      factor real CHECK (factor > 0 AND factor < 1),
      until timestamptz,
      reason text NOT NULL,
      rule_id uuid REFERENCES mta_reaction_rules(id) ON DELETE SET NULL,
      tenant_id uuid REFERENCES tenants(id) ON DELETE CASCADE,
      email_id uuid,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK (kind = 'pause_tenant' OR until IS NOT NULL)
    );
    CREATE INDEX mta_provider_suspensions_until ON mta_provider_suspensions (until);`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`DROP TABLE IF EXISTS mta_provider_suspensions;`);
};
