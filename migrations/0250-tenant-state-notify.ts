// Every change to what the API nodes cache per tenant (the tenant row: status, plan, limit, pause,
// tracking; its API keys; its quota cycle) is announced on the `svc_tenant_state` channel with the
// tenant's id, whoever makes it (a service, a worker thread, another node, plain SQL). Each API
// node LISTENs and drops what it cached for that tenant (daemon/modules/tenants/state-cache.ts).
// A trigger rather than a call in each service: no writer can forget it.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE FUNCTION svc_notify_tenant_state() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE changed record;
    BEGIN
      IF TG_OP = 'DELETE' THEN changed := OLD; ELSE changed := NEW; END IF;
      IF TG_TABLE_NAME = 'tenants' THEN PERFORM pg_notify('svc_tenant_state', changed.id::text);
      ELSE PERFORM pg_notify('svc_tenant_state', changed.tenant_id::text);
      END IF;
      RETURN NULL;
    END $$;
    CREATE TRIGGER tenants_state_notify AFTER UPDATE OR DELETE ON tenants
      FOR EACH ROW EXECUTE FUNCTION svc_notify_tenant_state();
    CREATE TRIGGER api_keys_state_notify AFTER UPDATE OF revoked_at, scopes, environment, prefix, key_hash, tenant_id OR DELETE ON api_keys
      FOR EACH ROW EXECUTE FUNCTION svc_notify_tenant_state();
    CREATE TRIGGER quota_cycles_state_notify AFTER INSERT OR UPDATE OR DELETE ON quota_cycles
      FOR EACH ROW EXECUTE FUNCTION svc_notify_tenant_state();`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    DROP TRIGGER IF EXISTS quota_cycles_state_notify ON quota_cycles;
    DROP TRIGGER IF EXISTS api_keys_state_notify ON api_keys;
    DROP TRIGGER IF EXISTS tenants_state_notify ON tenants;
    DROP FUNCTION IF EXISTS svc_notify_tenant_state();`);
};
