// The one INSERT of new email logs (issue 30): the accept path (INSERT_ACCEPTED, below, for
// emails/insert-accepted.ts) and a campaign's chunk (campaigns/chunk.ts) both write their logs,
// their 'queued' timeline rows and their send jobs with insertQueuedLogsSql, each from a CTE of
// its own that yields NEW_LOG_COLUMNS. A column added to new logs is added here. Each log's tags
// are written beside it as rows of email_log_tags (migration 0430), which the tag search walks.
import { declare } from '../../../db/sql.ts';
import { insertJobsSql } from '../../../queue/sql/enqueue.ts';
import { noneSuppressedSql } from '../../suppressions/sql/suppressions.ts';
import { insertSpoolRowsSql } from '../../../mta/sql/spool-insert.ts';

/** What the source CTE of insertQueuedLogsSql yields, by these names (status is QUEUED, updated_at = created_at). */
export const NEW_LOG_COLUMNS = `id, tenant_id, api_key_id, project_id, message_id, from_address, to_addresses, cc_addresses,
      bcc_addresses, reply_to, subject, html_body, text_body, template_version_id, data, locale, headers, tags, metadata,
      attachments, track_opens, track_clicks, test_mode, resent_from, scheduled_email_id, created_at`;

/**
 * The email_log_tags rows (tenant_id, tag, created_at, id) of the logs in `logs`, one per distinct tag of
 * each (a send may repeat a tag). DISTINCT within each log's tags, not over the set: the migration's
 * copy of every log does not sort them all.
 */
export function logTagRowsSql(logs: string): string {
  return `SELECT l.tenant_id, t.tag, l.created_at, l.id
    FROM ${logs} AS l CROSS JOIN LATERAL (SELECT DISTINCT tag FROM unnest(l.tags) AS tag) AS t`;
}

/**
 * The CTEs `logs` (the new logs, from the CTE `source`, answering their ids), `tagged` (their
 * tags' rows), `timeline` and `queued` (each log's 'queued' timeline row and send job). The
 * arguments are the enclosing statement's placeholders (`$n`) of the tenant, the jobs' run time
 * (null: now), their attempts and their key prefix. `jobs: false` writes no send job (a message
 * spooled by the same statement: INSERT_ACCEPTED_SPOOLED).
 */
export function insertQueuedLogsSql(
  source: string,
  p: { tenantId: string; runAt: string; maxAttempts: string; jobKeyPrefix: string; jobs?: boolean },
): string {
  const jobs =
    p.jobs === false
      ? ''
      : `, queued AS (
    ${insertJobsSql(`SELECT 'send', ${p.tenantId}, jsonb_build_object('emailId', id, 'tenantId', CAST(${p.tenantId} AS uuid)),
           COALESCE(CAST(${p.runAt} AS timestamptz), now()), ${p.maxAttempts}, ${p.jobKeyPrefix} || id
      FROM logs`)}
  )`;
  return `logs AS (
    INSERT INTO email_logs (${NEW_LOG_COLUMNS}, status, updated_at)
    SELECT ${NEW_LOG_COLUMNS}, 'QUEUED', created_at
      FROM ${source}
    RETURNING id, tenant_id, tags, created_at
  ), tagged AS (
    INSERT INTO email_log_tags (tenant_id, tag, created_at, id) ${logTagRowsSql('logs')}
  ), timeline AS (
    INSERT INTO email_events (tenant_id, email_id, type, data) SELECT ${p.tenantId}, id, 'queued', '{}' FROM logs
  )${jobs}`;
}

/**
 * The accepted sends' rows, as the accept statement reads them from its jsonb parameter ($4); each
 * body is a byte range (0-based start, length; null: no body) of the bodies parameter ($18, bytea).
 */
const ROW_COLUMNS = `id uuid, project_id uuid, message_id text, from_address text, to_addresses text[], cc_addresses text[],
  bcc_addresses text[], reply_to text[], subject text, html_at int, html_length int, text_at int, text_length int,
  template_version_id uuid, data jsonb,
  locale text, headers jsonb, tags text[], metadata jsonb, attachments jsonb, track_opens boolean, track_clicks boolean,
  resent_from uuid, scheduled_email_id uuid`;

const SPOOLED_GUARD = `
       AND COALESCE(t.track_opens, false) = false AND COALESCE(t.track_clicks, false) = false`;

// The spool rows of the new logs (the spool's own INSERT), and each log's 'spooled' timeline row after its
// 'queued' one (clock_timestamp: later than the statement's now(), which both would otherwise share).
const SPOOLED_CTES = `, spool_input AS (
    SELECT s.*, count(*) OVER (PARTITION BY s.email_id) AS destinations
      FROM jsonb_to_recordset($19::jsonb) AS s(id uuid, email_id uuid, domain text, recipients jsonb, envelope_from text,
                                                 message_at int, message_length int, sent_headers text)
  ), spooled AS (
    ${insertSpoolRowsSql(`SELECT s.id, l.tenant_id, s.email_id, s.domain, s.recipients, s.envelope_from,
           substring($18::bytea FROM s.message_at + 1 FOR s.message_length) AS message,
           now() + $20::float8 * interval '1 hour' AS expires_at, NULL::uuid AS project_id, 'transactional' AS stream,
           l.created_at AS log_created_at, 1 AS log_attempt, s.sent_headers AS log_sent_headers,
           NULL::text AS log_subject, NULL::text AS log_html, NULL::text AS log_text
      FROM spool_input s JOIN logs l ON l.id = s.email_id`)}
  ), spooled_timeline AS (
    INSERT INTO email_events (tenant_id, email_id, type, data, created_at)
    SELECT DISTINCT ON (l.id) l.tenant_id, l.id, 'spooled',
           jsonb_build_object('response', 'spooled for ' || s.destinations || ' destination(s)'), clock_timestamp()
      FROM logs l JOIN spool_input s ON s.email_id = l.id
  )`;

// The MTA loops are woken after the commit (mta/spooler.ts, wakeMtaLoops), not by a NOTIFY here: in a
// synchronous commit it would serialise every accept's commit (queue/enqueue.ts). $8–$10 describe send
// jobs, which a spooled send has none of; named here only so that the two statements take the same
// parameters (PostgreSQL must type each one).
const SPOOLED_NOTIFY = `, (SELECT count(*) FROM spooled)::int AS spooled,
         CAST($8 AS timestamptz) AS run_at, CAST($9 AS int) AS max_attempts, CAST($10 AS text) AS job_key_prefix`;

// The quota is reserved first, exactly: one counter row per tenant and cycle, incremented only while
// it stays within the cap. INSERT … ON CONFLICT DO UPDATE locks the row and evaluates its WHERE on the
// newest committed value, so concurrent accepts (on any number of API nodes) serialize on that row and
// none can pass the cap; when the reservation fails, `input` is empty and nothing is written. The cost
// is that one tenant's counted accepts queue on its row for the rest of the statement and the commit
// (sharded counters avoided that, but could only check usage read before the statement, which let a
// 40-way burst through at 31–35 sends where 11 was the cap).
//
// Each condition of `guard` (and the cap of `reserved`) re-checks a rule of a send that decide() in
// emails/service.ts decided first from the tenant's state: its comment has the table of both, rule by
// rule. A rule changed in one place is changed in the other.
//
// $1 tenant, $2 api key, $3 test mode, $4 the rows (jsonb, ROW_COLUMNS), $5 sends counted, $6 quota
// cap, $7 cycle start, $8 job run time, $9 max attempts, $10 job key prefix, $11–$14 and $17 the
// tenant state the caller expects (plan, limit, cycle start, sender domains, whether to check the key),
// $15 recipients (none suppressed), $16 the logs' created_at, $18 the bodies (UTF-8, one after the other).
function insertAcceptedSql(spooled: boolean): string {
  return `
  WITH guard AS (
    SELECT t.track_opens, t.track_clicks FROM tenants t
     WHERE t.id = $1::uuid AND t.sending_paused_at IS NULL
       AND t.plan = $11::text AND t.monthly_limit IS NOT DISTINCT FROM $12::int
       AND (SELECT c.started_at FROM quota_cycles c WHERE c.tenant_id = t.id) IS NOT DISTINCT FROM $13::timestamptz
       AND (NOT $17::boolean OR (t.status = 'active' AND EXISTS (SELECT 1 FROM api_keys k WHERE k.id = $2::uuid AND k.tenant_id = t.id AND k.revoked_at IS NULL)))
       AND ($14::text[] IS NULL OR EXISTS (SELECT 1 FROM domains d WHERE d.tenant_id = t.id AND d.status = 'verified' AND d.name = ANY($14::text[])))
       AND ${noneSuppressedSql('t.id', { any: '$15::text[]' })}${spooled ? SPOOLED_GUARD : ''}
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
  ), new_logs AS (
    SELECT id, $1::uuid AS tenant_id, $2::uuid AS api_key_id, project_id, message_id, from_address, to_addresses, cc_addresses,
      bcc_addresses, reply_to, subject,
      convert_from(substring($18::bytea FROM html_at + 1 FOR html_length), 'UTF8') AS html_body,
      convert_from(substring($18::bytea FROM text_at + 1 FOR text_length), 'UTF8') AS text_body,
      template_version_id, data, locale, headers, tags, metadata,
      attachments, COALESCE(track_opens, tenant_opens, false) AS track_opens, COALESCE(track_clicks, tenant_clicks, false) AS track_clicks,
      $3::boolean AS test_mode, resent_from, scheduled_email_id, $16::timestamptz AS created_at
      FROM input
  ), ${insertQueuedLogsSql('new_logs', { tenantId: '$1::uuid', runAt: '$8::timestamptz', maxAttempts: '$9::int', jobKeyPrefix: '$10::text', jobs: !spooled })}${spooled ? SPOOLED_CTES : ''}
  SELECT (SELECT count(*) FROM logs)::int AS inserted, EXISTS (SELECT 1 FROM guard) AS fresh, (SELECT used FROM reserved) AS used${spooled ? SPOOLED_NOTIFY : ''}`;
}

export const INSERT_ACCEPTED = declare('emails.insert-accepted', insertAcceptedSql(false));

/**
 * A message submitted over SMTP that leaves as it came (smtp/submission-spool.ts; the rule in
 * emails/service.ts, spoolsAtAccept): the statement above, but instead of a send job each log gets its
 * spool rows (mta/sql/spool-insert.ts), signed already, and its 'spooled' timeline row, in the same
 * commit: one durable write per message, and the worker's MTA delivers it with nothing composed or signed
 * again (woken after the commit: wakeMtaLoops). The guard also holds the tenant's tracking off (the message is not rewritten); when it was
 * turned on meanwhile the statement writes nothing and the send is decided again on the old path.
 * $19 the spool rows (jsonb: id, email_id, domain, recipients, envelope_from, message_at, message_length,
 * sent_headers; each message a byte range of $18 after the bodies), $20 their expiry in hours.
 */
export const INSERT_ACCEPTED_SPOOLED = declare('emails.insert-accepted-spooled', insertAcceptedSql(true));
