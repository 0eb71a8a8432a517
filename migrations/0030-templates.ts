// Templates, their versions (one published per locale), and template tags.
// project_id has no foreign key: projects are another area's table and may be created after this one.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    CREATE TABLE templates (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      project_id uuid,
      name text NOT NULL,
      slug text NOT NULL,
      editor_mode text NOT NULL CHECK (editor_mode IN ('html', 'react-email')),
      default_locale text NOT NULL DEFAULT 'en',
      created_by uuid REFERENCES admins(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX templates_tenant_slug_key ON templates (tenant_id, slug);
    CREATE INDEX templates_tenant_created_idx ON templates (tenant_id, created_at DESC);

    CREATE TABLE template_versions (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      template_id uuid NOT NULL REFERENCES templates(id) ON DELETE CASCADE,
      version integer NOT NULL,
      locale text NOT NULL,
      subject text NOT NULL,
      html_body text,
      text_body text,
      jsx text,
      published_at timestamptz,
      created_by uuid REFERENCES admins(id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX template_versions_number_key ON template_versions (template_id, version);
    CREATE UNIQUE INDEX template_versions_one_published_key ON template_versions (template_id, locale) WHERE published_at IS NOT NULL;
    CREATE INDEX template_versions_tenant_idx ON template_versions (tenant_id);

    CREATE TABLE template_tags (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      tenant_id uuid NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX template_tags_tenant_name_key ON template_tags (tenant_id, name);

    CREATE TABLE template_tag_links (
      template_id uuid NOT NULL REFERENCES templates(id) ON DELETE CASCADE,
      tag_id uuid NOT NULL REFERENCES template_tags(id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (template_id, tag_id)
    );
    CREATE INDEX template_tag_links_tag_idx ON template_tag_links (tag_id);
  `);
};

export const down: Migration = async ({ context }) => {
  await context.sql('DROP TABLE IF EXISTS template_tag_links, template_tags, template_versions, templates CASCADE');
};
