// One chunk of a campaign's expansion, set-wise: ONE statement reads the chunk's contacts by keyset
// and writes their email logs, 'queued' timeline rows and send jobs (INSERT … SELECT FROM contacts,
// with the emails module's one INSERT of new logs: emails/sql/insert-logs.ts),
// reserves the exact quota for them and moves the campaign's position with its counters. It runs in
// a transaction that first locks the campaign row and reads the position under that lock, so the
// chunk commits whole or not at all, from the position the last committed chunk left (expand.ts
// says why that makes a kill -9 harmless).
//
// This replaced a call into acceptSends per chunk: reading 1,000 contacts into JavaScript, building,
// validating and serialising 1,000 sends and sending them back as JSON cost about 1 ms of CPU per
// recipient in the shared worker thread (docs/lists.md). What is the same for every recipient (the
// sender, its checks, the template versions, the tracking defaults) is settled once per job run in
// expand.ts; what differs (address, Liquid data, locale version, project) is computed here in SQL,
// with the same values acceptSends stored: the worker renders and sends these mails unchanged.
//
// Rules kept from the send pipeline: suppressed addresses are skipped (NOT EXISTS) and counted as
// rejected, as are contacts whose locale has no published version; the quota is reserved on the
// tenant's counter row exactly as insert-accepted.ts does (the row is locked, the reservation made
// only while it stays within the 110 % cap), and a chunk that would pass the cap writes nothing.
import type pg from 'pg';
import { declare, type Sql, type Statement } from '../../db/sql.ts';
import { insertQueuedLogsSql } from '../emails/sql/insert-logs.ts';
import { noneSuppressedSql } from '../suppressions/sql/suppressions.ts';
import type { Audience } from '../../../shared/schemas/campaigns.ts';

/** A published version, as the chunk statement picks it per contact (id and its own locale). */
export interface ChunkVersion {
  id: string;
  locale: string;
}

/** What every recipient of the campaign shares, settled once per job run. */
export interface ChunkPlan {
  tenantId: string;
  campaignId: string;
  audience: Audience;
  apiKeyId: string | null;
  testMode: boolean;
  /** The sender's domain is verified (or nothing leaves: test mode); else a contact with a project is refused. */
  domainVerified: boolean;
  /** The formatted sender, as normalizeSend gives it. */
  from: string;
  /** What follows the log id in its Message-ID: `@domain>` (messageIdFor in the emails module). */
  messageIdSuffix: string;
  /** Published versions by lower-cased locale (and language), and the default locale's. */
  versions: Record<string, ChunkVersion>;
  defaultVersion: ChunkVersion | null;
  maxAttempts: number;
  jobKeyPrefix: string;
}

/** What is read again for every chunk: the quota cycle and the tenant's tracking defaults. */
export interface ChunkTenant {
  cycleStart: Date;
  /** The most sends the cycle may count (110 % of the limit). */
  cap: number;
  trackOpens: boolean;
  trackClicks: boolean;
}

export type ChunkResult =
  | { kind: 'written'; read: number; accepted: number; rejected: number }
  /** The campaign is no longer SENDING (cancelled, finished by another run): nothing was written. */
  | { kind: 'stopped' }
  /** The chunk's sends would pass the cap: nothing was written. */
  | { kind: 'over-quota'; wanted: number }
  /** A contact of the chunk has a project and the sender's domain is not verified: nothing was written. */
  | { kind: 'blocked'; projectId: string };

// Parameters: $1 tenant, $2 position (the nil uuid before the first chunk), $3 limit, $4 campaign,
// $5 versions by locale, $6 default version, $7 api key, $8 test mode, $9/$10 tracking, $11 from,
// $12 Message-ID suffix, $13 metadata, $14 cycle start, $15 cap, $16 max attempts, $17 job key
// prefix, $18 whether the sender's domain is verified (or the campaign in test mode); then the
// audience's own filters, in the order tag, locale, project.
const FIXED_PARAMETERS = 18;
const NIL_POSITION = '00000000-0000-0000-0000-000000000000';

/**
 * The chunk's contacts in id order after the position (a walk that an update mid-walk cannot
 * reorder), on the opted-in partial indexes of migration 0170. A tag narrows the walk through the
 * tag's links from the same position (a merge over two bounded index ranges), instead of an EXISTS
 * that the planner serves by reading every link of the tenant.
 */
function audienceWalk(audience: Audience): string {
  let next = FIXED_PARAMETERS;
  const clauses = ['c.tenant_id = $1', 'c.opt_in', 'c.id > $2'];
  if (audience.tag !== undefined) {
    next += 1;
    clauses.push(`c.id IN (SELECT l.contact_id FROM contact_tag_links l
      WHERE l.tag_id = (SELECT t.id FROM contact_tags t WHERE t.tenant_id = $1 AND t.name = $${next}) AND l.contact_id > $2)`);
  }
  if (audience.locale !== undefined) clauses.push(`lower(c.locale) = lower($${(next += 1)}::text)`);
  if (audience.projectId !== undefined) clauses.push(`c.project_id = $${(next += 1)}::uuid`);
  return `SELECT c.id, c.email, c.external_id, c.first_name, c.last_name, c.locale, c.project_id, c.attributes
      FROM contacts c WHERE ${clauses.join(' AND ')} ORDER BY c.id LIMIT $3`;
}

function chunkText(audience: Audience): string {
  return `
  WITH chunk AS (${audienceWalk(audience)}
  ), versioned AS (
    -- resolvePublishedVersion's order: the exact locale, its language, the template's default.
    SELECT ch.*, COALESCE(CAST($5 AS jsonb) -> lower(ch.locale), CAST($5 AS jsonb) -> split_part(lower(ch.locale), '-', 1), CAST($6 AS jsonb)) AS version
      FROM chunk ch
  ), kept AS (
    SELECT v.*, gen_random_uuid() AS log_id FROM versioned v
     WHERE v.version IS NOT NULL
       AND ${noneSuppressedSql('$1', { one: 'lower(v.email)' })}
  ), wanted AS (
    SELECT count(*)::int AS n FROM kept
  ), reserved AS (
    INSERT INTO quota_usage (tenant_id, cycle_start, shard, used)
    SELECT CAST($1 AS uuid), CAST($14 AS timestamptz), 0, w.n FROM wanted w WHERE NOT $8 AND w.n > 0 AND w.n <= $15
    ON CONFLICT (tenant_id, cycle_start, shard) DO UPDATE SET used = quota_usage.used + EXCLUDED.used
      WHERE quota_usage.used + EXCLUDED.used <= $15
    RETURNING used
  ), blocked AS (
    -- A contact's project makes its mail leave even in capture mode: the sender's domain must be verified.
    SELECT project_id FROM kept WHERE NOT CAST($18 AS boolean) AND project_id IS NOT NULL LIMIT 1
  ), allowed AS (
    SELECT 1 AS ok FROM wanted w
     WHERE ($8 OR w.n = 0 OR EXISTS (SELECT 1 FROM reserved)) AND NOT EXISTS (SELECT 1 FROM blocked)
  ), new_logs AS (
    SELECT k.log_id AS id, CAST($1 AS uuid) AS tenant_id, CAST($7 AS uuid) AS api_key_id, k.project_id,
      '<' || k.log_id || $12 AS message_id, CAST($11 AS text) AS from_address, ARRAY[k.email] AS to_addresses,
      '{}'::text[] AS cc_addresses, '{}'::text[] AS bcc_addresses, '{}'::text[] AS reply_to, '' AS subject,
      NULL::text AS html_body, NULL::text AS text_body, CAST(k.version ->> 'id' AS uuid) AS template_version_id,
      -- templateData() of the old path: the contact's attributes, and the contact itself under "contact".
      k.attributes || jsonb_build_object('contact', jsonb_build_object('email', k.email, 'externalId', k.external_id,
        'firstName', k.first_name, 'lastName', k.last_name, 'locale', k.locale, 'attributes', k.attributes)) AS data,
      k.version ->> 'locale' AS locale, '{}'::jsonb AS headers, ARRAY['campaign'] AS tags, CAST($13 AS jsonb) AS metadata,
      '[]'::jsonb AS attachments, CAST($9 AS boolean) AS track_opens, CAST($10 AS boolean) AS track_clicks,
      CAST($8 AS boolean) AS test_mode, NULL::uuid AS resent_from, NULL::uuid AS scheduled_email_id, now() AS created_at
      FROM kept k WHERE EXISTS (SELECT 1 FROM allowed)
  ), ${insertQueuedLogsSql('new_logs', { tenantId: '$1', runAt: 'NULL', maxAttempts: 'CAST($16 AS int)', jobKeyPrefix: '$17' })}, moved AS (
    UPDATE campaigns SET expansion_cursor = COALESCE((SELECT id FROM chunk ORDER BY id DESC LIMIT 1), expansion_cursor),
           status = CASE WHEN EXISTS (SELECT 1 FROM chunk) THEN status ELSE 'SENT' END,
           sent_at = CASE WHEN EXISTS (SELECT 1 FROM chunk) THEN sent_at ELSE now() END,
           accepted_count = accepted_count + (SELECT count(*) FROM logs),
           rejected_count = rejected_count + (SELECT count(*) FROM chunk) - (SELECT n FROM wanted),
           last_error = NULL, updated_at = now()
     WHERE id = $4 AND tenant_id = $1 AND EXISTS (SELECT 1 FROM allowed)
    RETURNING id
  )
  SELECT (SELECT count(*) FROM chunk)::int AS read, (SELECT n FROM wanted) AS wanted,
         (SELECT count(*) FROM logs)::int AS accepted, EXISTS (SELECT 1 FROM allowed) AS allowed,
         (SELECT project_id FROM blocked) AS blocked_project`;
}

/**
 * One declared statement per audience shape, so each keeps the plan of its own index. Module-level on
 * purpose: names and texts only (declare() opens nothing), like every other declared statement.
 */
const statements = new Map<string, Statement>();
for (const tag of [false, true]) {
  for (const locale of [false, true]) {
    for (const project of [false, true]) {
      const shape = {
        ...(tag ? { tag: '' } : {}),
        ...(locale ? { locale: '' } : {}),
        ...(project ? { projectId: '' } : {}),
      };
      const key = `${Number(tag)}${Number(locale)}${Number(project)}`;
      statements.set(key, declare(`campaign-chunk-${key}`, chunkText(shape)));
    }
  }
}

function statementFor(audience: Audience): { statement: Statement; filters: unknown[] } {
  const key = `${Number(audience.tag !== undefined)}${Number(audience.locale !== undefined)}${Number(audience.projectId !== undefined)}`;
  const filters = [audience.tag, audience.locale, audience.projectId].filter((value) => value !== undefined);
  return { statement: statements.get(key)!, filters };
}

// Taken first: the chunk runs only while the campaign is SENDING, from the position read under the
// lock, and holds the campaign row until it commits. Another run of the same job waits and then
// reads the position this chunk left; a cancel (which locks the same row first, then the quota row)
// waits for the chunk or makes it find nothing. Both take the two rows in the same order.
const LOCK_POSITION = declare(
  'campaign-chunk-lock',
  `
  SELECT expansion_cursor FROM campaigns WHERE id = $1 AND tenant_id = $2 AND status = 'SENDING' FOR UPDATE`,
);

class NothingWritten extends Error {
  constructor(readonly result: ChunkResult) {
    super(result.kind);
  }
}

/** Writes the next chunk of at most `limit` contacts (see the header). */
export async function writeChunk(sql: Sql, plan: ChunkPlan, tenant: ChunkTenant, limit: number): Promise<ChunkResult> {
  const { statement, filters } = statementFor(plan.audience);
  try {
    return await sql.transaction(async (client: pg.PoolClient) => {
      const [campaign] = await sql.rows<{ expansion_cursor: string | null }>(
        LOCK_POSITION,
        [plan.campaignId, plan.tenantId],
        client,
      );
      if (!campaign) throw new NothingWritten({ kind: 'stopped' });
      const [row] = await sql.rows<{
        read: number;
        wanted: number;
        accepted: number;
        allowed: boolean;
        blocked_project: string | null;
      }>(
        statement,
        [
          plan.tenantId,
          campaign.expansion_cursor ?? NIL_POSITION,
          limit,
          plan.campaignId,
          JSON.stringify(plan.versions),
          plan.defaultVersion ? JSON.stringify(plan.defaultVersion) : null,
          plan.apiKeyId,
          plan.testMode,
          tenant.trackOpens,
          tenant.trackClicks,
          plan.from,
          plan.messageIdSuffix,
          JSON.stringify({ campaignId: plan.campaignId }),
          tenant.cycleStart,
          tenant.cap,
          plan.maxAttempts,
          plan.jobKeyPrefix,
          plan.domainVerified,
          ...filters,
        ],
        client,
      );
      if (row.blocked_project) throw new NothingWritten({ kind: 'blocked', projectId: row.blocked_project });
      if (!row.allowed) throw new NothingWritten({ kind: 'over-quota', wanted: row.wanted });
      return { kind: 'written', read: row.read, accepted: row.accepted, rejected: row.read - row.accepted } as const;
    });
  } catch (error) {
    if (error instanceof NothingWritten) return error.result;
    throw error;
  }
}
