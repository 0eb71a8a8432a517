// Contacts, the tenant's tag catalogue and the links between them. A tag is linked by id so that a
// rename touches one row; erasing a contact (GDPR) cascades to its links.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE contacts (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      project_id uuid,
      email text NOT NULL,
      external_id text,
      first_name text,
      last_name text,
      locale text,
      opt_in boolean NOT NULL DEFAULT false,
      attributes jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX contacts_tenant_email_key ON contacts (tenant_id, lower(email));
    CREATE UNIQUE INDEX contacts_tenant_external_id_key ON contacts (tenant_id, external_id) WHERE external_id IS NOT NULL;
    CREATE INDEX contacts_tenant_updated_idx ON contacts (tenant_id, updated_at, id);

    CREATE TABLE contact_tags (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX contact_tags_tenant_name_key ON contact_tags (tenant_id, name);

    CREATE TABLE contact_tag_links (
      contact_id uuid NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
      tag_id uuid NOT NULL REFERENCES contact_tags(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (contact_id, tag_id)
    );
    CREATE INDEX contact_tag_links_tag_idx ON contact_tag_links (tag_id, contact_id);
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS contact_tag_links, contact_tags, contacts CASCADE');
};
