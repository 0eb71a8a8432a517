// The log of a send handed to the outbound MTA. What the log records of the attempt (the headers that
// went out, the attempt's number, a template's rendered content) is written into the send's spool rows
// by the spool's own statement (mta/sql/spool.ts) and reaches the log with its first outcome: a
// delivery's DELIVERED (RECORD_OUTCOMES joins the row, spooledLogSet below), or SENDING for an attempt
// that ends otherwise (deferred, bounced, expired: APPLY_SPOOLED_LOGS, then the outcome's own write).
// Until then the log stays QUEUED and its timeline says it was spooled. Writing the log as the row was
// spooled (status SENDING) and again at the outcome cost a second non-HOT update per message — a new row
// version and an entry in each of the log's indexes: PostgreSQL's CPU in a bench:mta run of 20,500
// messages went 61 → 48 CPU-s without it (docs/mta.md, "One write of the log per delivery").
import { declare } from '../../../db/sql.ts';

/**
 * A log's attempts after an outcome that ends attempt `attempt` (LogOutcome.attempt; null: counted before,
 * unchanged): one more, or the attempt itself where runs a crash lost make it greater. `log` is the
 * alias of email_logs in the statement. (Here rather than beside RECORD_OUTCOMES, whose module imports
 * this one.)
 */
export function countedAttemptsSql(log: string, attempt: string): string {
  return `CASE WHEN ${attempt} IS NULL THEN ${log}.attempts ELSE GREATEST(${log}.attempts + 1, ${attempt}) END`;
}

/**
 * Whether the spool row `spool` (an alias, possibly of an outer join: null columns) still has fields to
 * write on log `log`: the row carries them, it is the log's tenant's, and the log, still before its
 * outcome, has no sent headers yet (set only by this write, or by a relay's attempt, which counted itself).
 */
function pendingSql(log: string, spool: string): string {
  return `(${spool}.log_created_at IS NOT NULL AND ${spool}.tenant_id = ${log}.tenant_id
            AND ${log}.status IN ('QUEUED', 'SENDING') AND ${log}.sent_headers IS NULL)`;
}

/**
 * The SET items of an UPDATE of email_logs `log` that write the spooled fields of `spool` where they are
 * pending, beside an outcome whose own fields (`outcome`: RECORD_OUTCOMES' row, or null) win. The
 * attempt is counted once: with the fields.
 */
export function spooledLogSet(log: string, spool: string, outcome: string | null): string {
  const pending = pendingSql(log, spool);
  const own = (field: string) => (outcome ? `${outcome}.${field}, ` : '');
  return `
           attempts = CASE WHEN ${pending} THEN ${countedAttemptsSql(log, `${spool}.log_attempt`)}
                           ELSE ${outcome ? countedAttemptsSql(log, `${outcome}.attempt`) : `${log}.attempts`} END,
           sent_headers = COALESCE(${outcome ? `CAST(${outcome}.sent_headers AS jsonb), ` : ''}${log}.sent_headers, CAST(${spool}.log_sent_headers AS jsonb)),
           subject = COALESCE(${own('subject')}${spool}.log_subject, ${log}.subject),
           html_body = COALESCE(${own('html')}${spool}.log_html, ${log}.html_body),
           text_body = COALESCE(${own('text')}${spool}.log_text, ${log}.text_body),
           sent_at = CASE ${outcome ? `WHEN ${outcome}.status = 'SENT' THEN now() ` : ''}WHEN ${pending} THEN ${spool}.created_at ELSE ${log}.sent_at END`;
}

/**
 * $1 spool row ids: their logs, where still QUEUED (or SENDING: a send in its request) without the
 * spooled fields, become SENDING with them — an attempt that did not deliver (deferred; bounced or
 * expired, whose own write follows). The log must be the row's tenant's.
 */
export const APPLY_SPOOLED_LOGS = declare(
  'emails.apply-spooled-logs',
  `
  UPDATE email_logs l
     SET status = 'SENDING', error = NULL, updated_at = now(),${spooledLogSet('l', 's', null)}
    FROM mta_spool s
   WHERE s.id = ANY($1::uuid[]) AND l.id = s.email_id AND l.tenant_id = s.tenant_id AND l.created_at = s.log_created_at
     AND ${pendingSql('l', 's')}
  RETURNING l.id::text AS id`,
);
