// Writing accepted sends: the logs, their 'queued' timeline rows, their send jobs and the quota
// count in ONE statement (data-modifying CTEs) on plain `pg`, declared once and prepared per
// connection (daemon/db/sql.ts), so a plain send is a single round trip that commits on its own,
// and a send with an Idempotency-Key adds only its key row to the transaction.
//
// The statement also re-checks, in the same snapshot, everything the caller decided from its
// cached tenant state (tenants/state-cache.ts): the tenant not paused (nor blocked, for a key), its
// plan, limit and quota cycle unchanged, the key not revoked, the sender domain verified, no
// recipient suppressed. When one of those no longer holds it writes nothing and answers
// `fresh: false`; the caller reads the state again and decides with that (emails/service.ts).
import type pg from 'pg';
import { declare, type Sql } from '../../db/sql.ts';
import { recipientsOf, type NormalizedSend } from './validate.ts';

export interface AcceptedSend {
  request: NormalizedSend;
  id: string;
  messageId: string;
}

/** What the caller believed when it decided to accept: the statement checks it again. */
export interface ExpectedTenantState {
  plan: string;
  monthlyLimit: number | null;
  /** quota_cycles.started_at (null when billing never restarted the cycle). */
  cycleStartedAt: Date | null;
  /** Names one of which must be a verified domain of the tenant (the sender's and its parents); null: no check. */
  senderDomains: string[] | null;
  /** Hold the send to its API key (not revoked) and the tenant's status (not blocked). */
  checkKey: boolean;
}

export interface InsertAcceptedOptions {
  tenantId: string;
  apiKeyId: string | null;
  testMode: boolean;
  /** Sends counted against the quota in `cycleStart` (0 for test keys). */
  counted: number;
  /** The most sends the cycle may count (110 % of the limit): a reservation past it inserts nothing. */
  quotaCap: number;
  cycleStart: Date;
  /** Job run time; undefined runs it now (a sync send's safety job runs later). */
  runAt?: Date;
  maxAttempts: number;
  jobKeyPrefix: string;
  expected: ExpectedTenantState;
}

export interface InsertOutcome {
  /** False: the tenant's state is not what the caller expected (nothing written). */
  fresh: boolean;
  /** Rows written; 0 with `fresh` and counted sends means the quota reservation failed. */
  inserted: number;
  /** The cycle's count right after this reservation (null when nothing was reserved). */
  used: number | null;
}

const ROW_COLUMNS = `id uuid, project_id uuid, message_id text, from_address text, to_addresses text[], cc_addresses text[],
  bcc_addresses text[], reply_to text[], subject text, html_body text, text_body text, template_version_id uuid, data jsonb,
  locale text, headers jsonb, tags text[], metadata jsonb, attachments jsonb, track_opens boolean, track_clicks boolean,
  resent_from uuid, scheduled_email_id uuid`;

/**
 * The CTEs `timeline` and `queued` that give each row of a preceding CTE `logs` (its `id`) its
 * 'queued' timeline row and its send job. The arguments are the statement's placeholders (the accept
 * statement's and the campaign chunk statement's `$n`), so both write the same rows.
 */
export function queuedRowsOfLogs(p: {
  tenantId: string;
  runAt: string;
  maxAttempts: string;
  jobKeyPrefix: string;
}): string {
  return `timeline AS (
    INSERT INTO email_events (tenant_id, email_id, type, data) SELECT ${p.tenantId}, id, 'queued', '{}' FROM logs
  ), queued AS (
    INSERT INTO jobs (queue, tenant_id, payload, run_at, max_attempts, key)
    SELECT 'send', ${p.tenantId}, jsonb_build_object('emailId', id, 'tenantId', CAST(${p.tenantId} AS uuid)),
           COALESCE(CAST(${p.runAt} AS timestamptz), now()), ${p.maxAttempts}, ${p.jobKeyPrefix} || id
      FROM logs
  )`;
}

// The quota is reserved first, exactly: one counter row per tenant and cycle, incremented only while
// it stays within the cap. INSERT … ON CONFLICT DO UPDATE locks the row and evaluates its WHERE on the
// newest committed value, so concurrent accepts (on any number of API nodes) serialize on that row and
// none can pass the cap; when the reservation fails, `input` is empty and nothing is written. The cost
// is that one tenant's counted accepts queue on its row for the rest of the statement and the commit
// (sharded counters avoided that, but could only check usage read before the statement, which let a
// 40-way burst through at 31–35 sends where 11 was the cap).
const INSERT_ACCEPTED = declare(
  'emails.insert-accepted',
  `
  WITH guard AS (
    SELECT t.track_opens, t.track_clicks FROM tenants t
     WHERE t.id = $1::uuid AND t.sending_paused_at IS NULL
       AND t.plan = $11::text AND t.monthly_limit IS NOT DISTINCT FROM $12::int
       AND (SELECT c.started_at FROM quota_cycles c WHERE c.tenant_id = t.id) IS NOT DISTINCT FROM $13::timestamptz
       AND (NOT $17::boolean OR (t.status = 'active' AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $2::uuid AND k.tenant_id = t.id AND k.revoked_at IS NULL)))
       AND ($14::text[] IS NULL OR EXISTS (SELECT 1 FROM domains d WHERE d.tenant_id = t.id AND d.status = 'verified' AND d.name = ANY($14::text[])))
       AND NOT EXISTS (SELECT 1 FROM suppressions s WHERE s.tenant_id = t.id AND s.email = ANY($15::text[]))
  ), reserved AS (
    INSERT INTO quota_usage (tenant_id, cycle_start, shard, used)
    SELECT $1::uuid, $7::timestamptz, 0, $5::int FROM guard WHERE $5::int > 0 AND $5::int <= $6::int
    ON CONFLICT (tenant_id, cycle_start, shard) DO UPDATE SET used = quota_usage.used + EXCLUDED.used
      WHERE quota_usage.used + EXCLUDED.used <= $6::int
    RETURNING used
  ), input AS (
    SELECT r.*, g.track_opens AS tenant_opens, g.track_clicks AS tenant_clicks
      FROM guard g, jsonb_to_recordset($4::jsonb) AS r(${ROW_COLUMNS})
     WHERE $5::int = 0 OR EXISTS (SELECT 1 FROM reserved)
  ), logs AS (
    INSERT INTO email_logs (id, tenant_id, api_key_id, project_id, status, message_id, from_address, to_addresses, cc_addresses,
      bcc_addresses, reply_to, subject, html_body, text_body, template_version_id, data, locale, headers, tags, metadata,
      attachments, track_opens, track_clicks, test_mode, resent_from, scheduled_email_id, created_at, updated_at)
    SELECT id, $1::uuid, $2::uuid, project_id, 'QUEUED', message_id, from_address, to_addresses, cc_addresses,
      bcc_addresses, reply_to, subject, html_body, text_body, template_version_id, data, locale, headers, tags, metadata,
      attachments, COALESCE(track_opens, tenant_opens, false), COALESCE(track_clicks, tenant_clicks, false), $3::boolean,
      resent_from, scheduled_email_id, $16::timestamptz, $16::timestamptz
      FROM input
    RETURNING id
  ), ${queuedRowsOfLogs({ tenantId: '$1::uuid', runAt: '$8::timestamptz', maxAttempts: '$9::int', jobKeyPrefix: '$10::text' })}
  SELECT (SELECT count(*) FROM logs)::int AS inserted, EXISTS (SELECT 1 FROM guard) AS fresh, (SELECT used FROM reserved) AS used`,
);

/** The sends as the statement's jsonb rows (tracking left null where the send says nothing: the tenant's default applies). */
function rowsOf(sends: AcceptedSend[]) {
  return sends.map(({ request: r, id, messageId }) => ({
    id,
    project_id: r.projectId,
    message_id: messageId,
    from_address: r.from,
    to_addresses: r.to,
    cc_addresses: r.cc,
    bcc_addresses: r.bcc,
    reply_to: r.replyTo,
    subject: r.subject,
    html_body: r.htmlBody,
    text_body: r.textBody,
    template_version_id: r.templateVersionId,
    data: r.data,
    locale: r.locale,
    headers: r.headers,
    tags: r.tags,
    metadata: r.metadata,
    attachments: r.attachments,
    track_opens: r.trackOpens ?? null,
    track_clicks: r.trackClicks ?? null,
    resent_from: r.resentFrom ?? null,
    scheduled_email_id: r.scheduledEmailId ?? null,
  }));
}

/**
 * Writes the sends (see the header) on the pool, or on `client` inside a transaction. The caller
 * wakes the send workers once they are committed.
 */
export async function insertAcceptedSends(
  sql: Sql,
  sends: AcceptedSend[],
  options: InsertAcceptedOptions,
  client?: pg.ClientBase,
): Promise<InsertOutcome> {
  if (sends.length === 0) return { fresh: true, inserted: 0, used: null };
  const recipients = [...new Set(sends.flatMap(({ request }) => recipientsOf(request)))];
  const [row] = await sql.rows<InsertOutcome>(
    INSERT_ACCEPTED,
    [
      options.tenantId,
      options.apiKeyId,
      options.testMode,
      JSON.stringify(rowsOf(sends)),
      options.counted,
      options.quotaCap,
      options.cycleStart,
      options.runAt ?? null,
      options.maxAttempts,
      options.jobKeyPrefix,
      options.expected.plan,
      options.expected.monthlyLimit,
      options.expected.cycleStartedAt,
      options.expected.senderDomains,
      recipients,
      new Date(),
      options.expected.checkKey,
    ],
    client,
  );
  return row;
}
