// contact_tag_links keeps its referential integrity per statement instead of per row (issue 51 §1).
//
// Its two foreign keys checked every inserted link with a query of its own that locked the contact and
// the tag (FOR KEY SHARE): four such checks per contact of an import with two tags, and the tags' rows,
// locked by every concurrent request, became multixacts that each check read again. PostgreSQL's CPU per
// contact imported (bench:lists, 50,000 contacts, time-ordered ids): bulk API 0.138 → 0.097 ms, CSV with
// two tags 0.220 → 0.101 ms. What the keys did is done set-wise instead:
// - a link is only written by statements that lock its contact and its tags first, once per statement
//   (contacts/bulk.ts: the contacts it inserts or updates, its tags FOR KEY SHARE; model.ts linkTags:
//   INSERT … SELECT … FOR KEY SHARE), so neither can be deleted before the link is committed;
// - ON DELETE CASCADE becomes one statement-level trigger per table, which deletes the links of every
//   contact or tag the statement deleted (GDPR erasure, a tag's deletion, a tenant's cascade).
// Dropping a foreign key rewrites and scans nothing: safe on a big table.
import type { Migration } from '../daemon/db/migrate.ts';

export const up: Migration = async ({ context }) => {
  await context.sql(`
    ALTER TABLE contact_tag_links DROP CONSTRAINT contact_tag_links_contact_id_fkey;
    ALTER TABLE contact_tag_links DROP CONSTRAINT contact_tag_links_tag_id_fkey;
    CREATE FUNCTION svc_contacts_unlink() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM contact_tag_links l USING deleted d WHERE l.contact_id = d.id;
      RETURN NULL;
    END $$;
    CREATE FUNCTION svc_contact_tags_unlink() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM contact_tag_links l USING deleted d WHERE l.tag_id = d.id;
      RETURN NULL;
    END $$;
    CREATE TRIGGER contacts_unlink AFTER DELETE ON contacts REFERENCING OLD TABLE AS deleted
      FOR EACH STATEMENT EXECUTE FUNCTION svc_contacts_unlink();
    CREATE TRIGGER contact_tags_unlink AFTER DELETE ON contact_tags REFERENCING OLD TABLE AS deleted
      FOR EACH STATEMENT EXECUTE FUNCTION svc_contact_tags_unlink();`);
};

export const down: Migration = async ({ context }) => {
  await context.sql(`
    DROP TRIGGER IF EXISTS contact_tags_unlink ON contact_tags;
    DROP TRIGGER IF EXISTS contacts_unlink ON contacts;
    DROP FUNCTION IF EXISTS svc_contact_tags_unlink();
    DROP FUNCTION IF EXISTS svc_contacts_unlink();
    DELETE FROM contact_tag_links l WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.id = l.contact_id)
       OR NOT EXISTS (SELECT 1 FROM contact_tags t WHERE t.id = l.tag_id);
    ALTER TABLE contact_tag_links ADD CONSTRAINT contact_tag_links_contact_id_fkey
      FOREIGN KEY (contact_id) REFERENCES contacts(id) ON DELETE CASCADE;
    ALTER TABLE contact_tag_links ADD CONSTRAINT contact_tag_links_tag_id_fkey
      FOREIGN KEY (tag_id) REFERENCES contact_tags(id) ON DELETE CASCADE;`);
};
