// POST /contacts/bulk and the CSV import, written set-wise: a request of up to 1,000 rows costs
// two statements (one lookup, one write), not a transaction and a handful of queries per row.
//
// The rules are those of PUT /contacts, row by row, in request order: a row is matched by its
// externalId, else by its email (case-insensitive); a matched row is updated (omitted fields keep
// their value, tags given replace the contact's tags), an unmatched one is created; an address that
// belongs to another contact, or to a contact with another externalId, is a row error that leaves
// its neighbours alone. To keep "in request order" exact, rows are written in waves: a row that
// shares an email, an externalId or a matched contact with an earlier row of the wave waits for the
// next wave, where it is matched against what the earlier row wrote. Almost every request is one wave.
//
// Two requests racing to create the same contact: the loser's write fails on a unique index and
// the wave is matched and written again (what PUT /contacts does with its one retry).
import type pg from 'pg';
import { declare, type Sql } from '../../db/sql.ts';
import type { TenantContext } from '../../context.ts';
import type { ContactDeps } from './service.ts';
import type { BulkRowResult, BulkUpsertContactsResult, UpsertContactBody } from '../../../shared/schemas/contacts.ts';
import { checkUpsertRow } from './row-validation.ts';
import { newContactId } from './contact-id.ts';

const WRITE_ATTEMPTS = 3;
const RACE_ERROR = 'Another contact already has this email address or externalId.';

// Both statements are planned at each run (planEachRun), not once per connection: each serves up to
// 1,000 rows, and a generic plan made while `contacts` was empty (a new install, the bench's fresh
// database, autovacuum not yet by) keeps reading the tenant's every contact (issue 51). Measured on
// PostgreSQL 15 with the pool's settings (force_generic_plan, enable_seqscan off), plans made on the
// empty table and run after 20,000 contacts: the lookup walked contacts_tenant_updated_idx and filtered
// 19,000 rows, 981 ms (1.5 ms planned with its values: BitmapOr of the email and externalId indexes);
// the write's UPDATE of 1,000 matched rows looped the input once per contact of the tenant, 5 M join
// filters at 5,000 contacts, 6.4 s (32 s at 20,000; 165 ms planned with its values). The bulk API fell
// from 22,600 to 2,200–4,700 contacts/s at 100,000; planning each run costs a few ms per 1,000 rows.
const PLAN_EACH_RUN = { planEachRun: true };

const FIND_MATCHES = declare(
  'contacts-bulk-find',
  `
  SELECT id, lower(email) AS email_key, external_id FROM contacts
   WHERE tenant_id = $1 AND (lower(email) = ANY($2::text[]) OR external_id = ANY($3::text[]))`,
  PLAN_EACH_RUN,
);

const WRITE_ROWS = declare(
  'contacts-bulk-write',
  `
  WITH input AS (
    -- A field the row omits is absent from its object (null here): no field of PUT /contacts is nullable.
    SELECT * FROM jsonb_to_recordset($2::jsonb) AS r(id uuid, op text, email text, external_id text, first_name text,
      last_name text, locale text, opt_in boolean, attributes jsonb, project_id uuid, tags text[])
  ), updated AS (
    UPDATE contacts c SET
      email = r.email,
      external_id = COALESCE(r.external_id, c.external_id),
      first_name = COALESCE(r.first_name, c.first_name),
      last_name = COALESCE(r.last_name, c.last_name),
      locale = COALESCE(r.locale, c.locale),
      opt_in = COALESCE(r.opt_in, c.opt_in),
      attributes = COALESCE(r.attributes, c.attributes),
      project_id = COALESCE(r.project_id, c.project_id),
      updated_at = now()
    FROM input r WHERE r.op = 'update' AND c.id = r.id AND c.tenant_id = $1
    RETURNING c.id
  ), inserted AS (
    INSERT INTO contacts (id, tenant_id, email, external_id, first_name, last_name, locale, opt_in, attributes, project_id)
    SELECT r.id, $1, r.email, r.external_id, r.first_name, r.last_name, r.locale, COALESCE(r.opt_in, false),
           COALESCE(r.attributes, '{}'::jsonb), r.project_id
      FROM input r WHERE r.op = 'insert'
    RETURNING id
  ), tag_names AS (
    SELECT DISTINCT t.name FROM input r CROSS JOIN LATERAL unnest(r.tags) AS t(name) WHERE r.tags IS NOT NULL
  ), known_tags AS (
    -- Locked once per statement, not once per link (contact_tag_links has no foreign keys, migration
    -- 0477): a tag cannot be deleted before the links written to it here are committed; one deleted
    -- since this statement's snapshot is skipped and created again below.
    SELECT t.id, t.name FROM contact_tags t JOIN tag_names n ON t.tenant_id = $1 AND t.name = n.name
       FOR KEY SHARE OF t
  ), new_tags AS (
    -- Only tags this statement's snapshot does not see. An existing tag is read and share-locked, never
    -- written: the DO UPDATE on every tag of every request (one 'bulk' tag on all rows) locked its row
    -- until commit against the other requests', so concurrent imports ran one at a time (issue 51).
    -- DO UPDATE (to the same name) still returns a tag that another request created after this
    -- snapshot was taken.
    INSERT INTO contact_tags (tenant_id, name)
    SELECT $1, n.name FROM tag_names n WHERE NOT EXISTS (SELECT 1 FROM known_tags k WHERE k.name = n.name)
    ON CONFLICT (tenant_id, name) DO UPDATE SET name = EXCLUDED.name
    RETURNING id, name
  ), tags AS (
    SELECT id, name FROM known_tags UNION ALL SELECT id, name FROM new_tags
  ), wanted AS (
    -- Links only to contacts this statement inserted or updated (and so holds until commit).
    SELECT DISTINCT r.id AS contact_id, tags.id AS tag_id
      FROM input r CROSS JOIN LATERAL unnest(r.tags) AS t(name) JOIN tags ON tags.name = t.name
     WHERE r.tags IS NOT NULL AND (r.op = 'insert' OR r.id IN (SELECT id FROM updated))
  ), unlinked AS (
    DELETE FROM contact_tag_links l USING input r
     WHERE r.tags IS NOT NULL AND r.op = 'update' AND l.contact_id = r.id
       AND NOT EXISTS (SELECT 1 FROM wanted w WHERE w.contact_id = l.contact_id AND w.tag_id = l.tag_id)
  ), linked AS (
    INSERT INTO contact_tag_links (contact_id, tag_id) SELECT contact_id, tag_id FROM wanted ON CONFLICT DO NOTHING
  )
  SELECT COALESCE((SELECT array_agg(id::text) FROM updated), '{}') AS updated`,
  PLAN_EACH_RUN,
);

interface Candidate {
  index: number;
  body: UpsertContactBody;
  emailKey: string;
}

export interface Match {
  id: string;
  email_key: string;
  external_id: string | null;
}

interface Planned {
  candidate: Candidate;
  op: 'insert' | 'update';
  id: string;
}

/** Rows sharing an email or externalId with an earlier row wait for the next wave. */
function splitWave(pending: Candidate[]): { wave: Candidate[]; later: Candidate[] } {
  const keys = new Set<string>();
  const wave: Candidate[] = [];
  const later: Candidate[] = [];
  for (const candidate of pending) {
    const own = [
      `e:${candidate.emailKey}`,
      ...(candidate.body.externalId !== undefined ? [`x:${candidate.body.externalId}`] : []),
    ];
    if (own.some((key) => keys.has(key))) later.push(candidate);
    else wave.push(candidate);
    for (const key of own) keys.add(key);
  }
  return { wave, later };
}

/** PUT /contacts' matching rules against the wave's matches: an operation, an error, or "wait". */
function plan(
  wave: Candidate[],
  matches: Match[],
  results: BulkRowResult[],
): { planned: Planned[]; later: Candidate[] } {
  const byEmail = new Map(matches.map((m) => [m.email_key, m]));
  const byExternalId = new Map(matches.filter((m) => m.external_id !== null).map((m) => [m.external_id as string, m]));
  const touched = new Set<string>();
  const planned: Planned[] = [];
  const later: Candidate[] = [];
  for (const candidate of wave) {
    const { body } = candidate;
    const byExt = body.externalId !== undefined ? byExternalId.get(body.externalId) : undefined;
    const byMail = byEmail.get(candidate.emailKey);
    const involved = [byExt?.id, byMail?.id].filter((id): id is string => id !== undefined);
    if (involved.some((id) => touched.has(id))) {
      later.push(candidate);
      continue;
    }
    for (const id of involved) touched.add(id);
    if (byExt) {
      if (byMail && byMail.id !== byExt.id) {
        results[candidate.index] = {
          index: candidate.index,
          status: 'error',
          error: `Another contact (${byMail.id}) already has the address ${body.email}.`,
        };
      } else {
        planned.push({ candidate, op: 'update', id: byExt.id });
      }
    } else if (byMail) {
      if (body.externalId !== undefined && byMail.external_id !== null && byMail.external_id !== body.externalId) {
        results[candidate.index] = {
          index: candidate.index,
          status: 'error',
          error: `The address ${body.email} belongs to the contact with externalId "${byMail.external_id}", not "${body.externalId}".`,
        };
      } else {
        planned.push({ candidate, op: 'update', id: byMail.id });
      }
    } else {
      planned.push({ candidate, op: 'insert', id: newContactId() });
    }
  }
  return { planned, later };
}

/**
 * One row of the write's input. Omitted fields stay undefined, so JSON.stringify leaves them out: the
 * input is half the size it was with a null and a has_<field> flag for each, and PostgreSQL parses it in
 * half the time (≈ 0.018 → 0.008 ms of CPU per row).
 */
function writeRow({ candidate: { body }, op, id }: Planned) {
  return {
    id,
    op,
    email: body.email,
    external_id: body.externalId,
    first_name: body.firstName,
    last_name: body.lastName,
    locale: body.locale,
    opt_in: body.optIn,
    attributes: body.attributes,
    project_id: body.projectId,
    tags: body.tags,
  };
}

/**
 * A race with another request, worth matching and writing again: a unique index (two requests creating
 * the same contact), or a deadlock (two writes creating or locking the same tags in different orders;
 * PostgreSQL cancels one of them).
 */
function isRace(error: unknown): boolean {
  const { code } = (error as pg.DatabaseError | undefined) ?? {};
  return code === '23505' || code === '40P01';
}

/** The contacts of the tenant that rows with these emails or externalIds would match, as they are now. */
export function findMatches(sql: Sql, tenantId: string, rows: { body: UpsertContactBody }[]): Promise<Match[]> {
  const emails = [...new Set(rows.map((row) => row.body.email.toLowerCase()))];
  const externalIds = [...new Set(rows.map((row) => row.body.externalId).filter((x): x is string => x !== undefined))];
  return sql.rows<Match>(FIND_MATCHES, [tenantId, emails, externalIds]);
}

/**
 * Matches and writes one wave; answers the rows that must wait for the next one. `known`: matches
 * already read for (at least) the wave's keys, used by the first attempt instead of a lookup.
 */
async function writeWave(
  sql: Sql,
  tenantId: string,
  wave: Candidate[],
  results: BulkRowResult[],
  known: Match[] | null,
): Promise<Candidate[]> {
  for (let attempt = 1; ; attempt += 1) {
    const matches = attempt === 1 && known ? known : await findMatches(sql, tenantId, wave);
    const scratch = [...results];
    const { planned, later } = plan(wave, matches, scratch);
    if (planned.length === 0) {
      Object.assign(results, scratch);
      return later;
    }
    try {
      const [written] = await sql.rows<{ updated: string[] }>(WRITE_ROWS, [
        tenantId,
        JSON.stringify(planned.map(writeRow)),
      ]);
      const updated = new Set(written.updated);
      Object.assign(results, scratch);
      for (const row of planned) {
        if (row.op === 'update' && !updated.has(row.id)) {
          // Erased between the match and the write: matched again (and created) in the next wave.
          later.push(row.candidate);
          continue;
        }
        results[row.candidate.index] = {
          index: row.candidate.index,
          status: row.op === 'insert' ? 'created' : 'updated',
          id: row.id,
        };
      }
      return later;
    } catch (error) {
      if (!isRace(error)) throw error;
      if (attempt < WRITE_ATTEMPTS) continue;
      for (const candidate of wave)
        results[candidate.index] = { index: candidate.index, status: 'error', error: RACE_ERROR };
      return [];
    }
  }
}

/**
 * Upserts rows already checked against UpsertContactBody; `indexes` are their positions in the request.
 * `known`: what findMatches answered for these rows just before (the CSV import reads it to order its
 * chunks), so that the first wave does not read it again.
 */
export async function upsertCheckedContacts(
  sql: Sql,
  ctx: TenantContext,
  rows: { index: number; body: UpsertContactBody }[],
  results: BulkRowResult[],
  known: Match[] | null = null,
): Promise<void> {
  let pending: Candidate[] = rows.map(({ index, body }) => ({ index, body, emailKey: body.email.toLowerCase() }));
  for (let first = true; pending.length > 0; first = false) {
    const { wave, later } = splitWave(pending);
    const waiting = await writeWave(sql, ctx.tenantId, wave, results, first ? known : null);
    pending = [...waiting, ...later].sort((a, b) => a.index - b.index);
  }
}

export function summarize(results: BulkRowResult[]): BulkUpsertContactsResult {
  let created = 0;
  let updated = 0;
  let failed = 0;
  for (const result of results) {
    if (result.status === 'created') created += 1;
    else if (result.status === 'updated') updated += 1;
    else failed += 1;
  }
  return { created, updated, failed, results };
}

/** POST /contacts/bulk: every row is checked on its own; valid rows are written set-wise. */
export async function bulkUpsertContacts(
  deps: ContactDeps,
  ctx: TenantContext,
  input: { rows: unknown[] },
): Promise<BulkUpsertContactsResult> {
  const { rows } = input;
  const results: BulkRowResult[] = new Array(rows.length);
  const valid: { index: number; body: UpsertContactBody }[] = [];
  rows.forEach((raw, index) => {
    const checked = checkUpsertRow(raw);
    if (checked.ok) valid.push({ index, body: checked.value });
    else results[index] = { index, status: 'error', error: checked.error };
  });
  await upsertCheckedContacts(deps.db.sql, ctx, valid, results);
  return summarize(results);
}
