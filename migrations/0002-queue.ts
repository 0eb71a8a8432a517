// The job queue. `jobs` holds only work still to do (waiting, scheduled or leased): a finished job
// is deleted, so the hot table and its indexes stay small. A job that runs out of attempts (or is
// given up on) moves to `failed_jobs`, kept for inspection.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE jobs (
      id bigserial PRIMARY KEY,
      queue text NOT NULL,
      tenant_id uuid REFERENCES tenants(id) ON DELETE CASCADE,
      payload jsonb NOT NULL DEFAULT '{}',
      key text,
      run_at timestamptz NOT NULL DEFAULT now(),
      attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
      max_attempts integer NOT NULL DEFAULT 5 CHECK (max_attempts >= 1),
      locked_by text,
      locked_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((locked_by IS NULL) = (locked_until IS NULL))
    );
    -- What claimJobs scans: unlocked jobs of one queue in run_at order.
    CREATE INDEX jobs_waiting_idx ON jobs (queue, run_at, id) WHERE locked_until IS NULL;
    -- What reclaimExpiredLeases and the running counts scan: leased jobs only.
    CREATE INDEX jobs_leased_idx ON jobs (locked_until) WHERE locked_until IS NOT NULL;
    -- At most one unfinished job per (queue, key): a scheduled send, a debounced task.
    CREATE UNIQUE INDEX jobs_queue_key_idx ON jobs (queue, key) WHERE key IS NOT NULL;
    CREATE INDEX jobs_tenant_idx ON jobs (tenant_id) WHERE tenant_id IS NOT NULL;

    CREATE TABLE failed_jobs (
      id bigint PRIMARY KEY,
      queue text NOT NULL,
      tenant_id uuid REFERENCES tenants(id) ON DELETE CASCADE,
      payload jsonb NOT NULL,
      key text,
      attempts integer NOT NULL,
      max_attempts integer NOT NULL,
      last_error text,
      created_at timestamptz NOT NULL,
      failed_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX failed_jobs_queue_idx ON failed_jobs (queue, failed_at DESC);
    CREATE INDEX failed_jobs_tenant_idx ON failed_jobs (tenant_id) WHERE tenant_id IS NOT NULL;
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS failed_jobs; DROP TABLE IF EXISTS jobs;');
};
