// Admins, tenants, memberships, API keys, sessions, one-time tokens, platform settings, audit.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE admins (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      email text NOT NULL,
      name text,
      password_hash text NOT NULL,
      email_verified_at timestamptz,
      is_platform_admin boolean NOT NULL DEFAULT false,
      totp_secret text,
      totp_pending_secret text,
      totp_enabled boolean NOT NULL DEFAULT false,
      totp_last_step bigint,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX admins_email_key ON admins (lower(email));

    CREATE TABLE tenants (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      name text NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'blocked')),
      plan text NOT NULL DEFAULT 'free',
      monthly_limit integer,
      sending_paused_at timestamptz,
      sending_paused_reason text,
      track_opens boolean,
      track_clicks boolean,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE memberships (
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      admin_id uuid NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'developer', 'viewer')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tenant_id, admin_id)
    );
    CREATE INDEX memberships_admin_idx ON memberships (admin_id);

    CREATE TABLE api_keys (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      prefix text NOT NULL UNIQUE,
      key_hash text NOT NULL,
      scopes text[] NOT NULL DEFAULT '{}',
      environment text NOT NULL CHECK (environment IN ('live', 'test')),
      created_by uuid REFERENCES admins(id) ON DELETE SET NULL,
      last_used_at timestamptz,
      revoked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX api_keys_tenant_idx ON api_keys (tenant_id, created_at DESC);

    CREATE TABLE refresh_tokens (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      admin_id uuid NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
      family_id uuid NOT NULL,
      token_hash text NOT NULL UNIQUE,
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz,
      replaced_by uuid,
      user_agent text,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX refresh_tokens_family_idx ON refresh_tokens (family_id);
    CREATE INDEX refresh_tokens_admin_idx ON refresh_tokens (admin_id);

    CREATE TABLE auth_tokens (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      admin_id uuid NOT NULL REFERENCES admins(id) ON DELETE CASCADE,
      purpose text NOT NULL CHECK (purpose IN ('reset-password', 'verify-email', 'login-challenge')),
      token_hash text NOT NULL UNIQUE,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE platform_settings (
      key text PRIMARY KEY,
      value jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE audit_events (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid REFERENCES tenants(id) ON DELETE CASCADE,
      admin_id uuid REFERENCES admins(id) ON DELETE SET NULL,
      api_key_id uuid REFERENCES api_keys(id) ON DELETE SET NULL,
      action text NOT NULL,
      target text,
      ip text,
      metadata jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX audit_events_tenant_idx ON audit_events (tenant_id, created_at DESC);
    CREATE INDEX audit_events_admin_idx ON audit_events (admin_id, created_at DESC);
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    DROP TABLE IF EXISTS audit_events, platform_settings, auth_tokens, refresh_tokens, api_keys, memberships, tenants, admins CASCADE;
  `);
};
