// Writing accepted sends: the logs, their 'queued' timeline rows, their send jobs and the quota
// count in ONE statement (data-modifying CTEs), so a plain send is a single round trip that commits
// on its own, and a send with an Idempotency-Key adds only its key row to the transaction. This was
// a Sequelize bulkCreate plus three statements per message plus BEGIN/COMMIT (see bench/).
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { wakeQueue } from '../../queue/enqueue.ts';
import type { NormalizedSend } from './validate.ts';

export interface AcceptedSend {
  request: NormalizedSend;
  id: string;
  messageId: string;
}

export interface InsertAcceptedOptions {
  tenantId: string;
  apiKeyId: string | null;
  testMode: boolean;
  /** The tenant's tracking defaults, used where a send says nothing. */
  trackOpens: boolean | null;
  trackClicks: boolean | null;
  /** Sends counted against the quota in `cycleStart` (0 for test keys). */
  counted: number;
  /** The most sends the cycle may count (110 % of the limit): a reservation past it inserts nothing. */
  quotaCap: number;
  cycleStart: Date;
  /** Job run time; undefined runs it now (a sync send's safety job runs later). */
  runAt?: Date;
  maxAttempts: number;
  jobKeyPrefix: string;
}

const ROW_COLUMNS = `id uuid, project_id uuid, message_id text, from_address text, to_addresses text[], cc_addresses text[],
  bcc_addresses text[], reply_to text[], subject text, html_body text, text_body text, template_version_id uuid, data jsonb,
  locale text, headers jsonb, tags text[], metadata jsonb, attachments jsonb, track_opens boolean, track_clicks boolean,
  resent_from uuid, scheduled_email_id uuid`;

/**
 * The CTEs `timeline` and `queued` that give each row of a preceding CTE `logs` (its `id`) its
 * 'queued' timeline row and its send job. The arguments are the statement's placeholders (Sequelize
 * replacements here, `$n` in the campaign chunk statement), so both write the same rows.
 */
export function queuedRowsOfLogs(p: { tenantId: string; runAt: string; maxAttempts: string; jobKeyPrefix: string }): string {
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
const INSERT_ACCEPTED = `
  WITH reserved AS (
    INSERT INTO quota_usage (tenant_id, cycle_start, shard, used)
    SELECT :tenantId, :cycleStart, 0, :counted WHERE :counted > 0 AND :counted <= :quotaCap
    ON CONFLICT (tenant_id, cycle_start, shard) DO UPDATE SET used = quota_usage.used + EXCLUDED.used
      WHERE quota_usage.used + EXCLUDED.used <= :quotaCap
    RETURNING used
  ), input AS (
    SELECT * FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS r(${ROW_COLUMNS})
     WHERE :counted = 0 OR EXISTS (SELECT 1 FROM reserved)
  ), logs AS (
    INSERT INTO email_logs (id, tenant_id, api_key_id, project_id, status, message_id, from_address, to_addresses, cc_addresses,
      bcc_addresses, reply_to, subject, html_body, text_body, template_version_id, data, locale, headers, tags, metadata,
      attachments, track_opens, track_clicks, test_mode, resent_from, scheduled_email_id, created_at, updated_at)
    SELECT id, :tenantId, :apiKeyId, project_id, 'QUEUED', message_id, from_address, to_addresses, cc_addresses,
      bcc_addresses, reply_to, subject, html_body, text_body, template_version_id, data, locale, headers, tags, metadata,
      attachments, track_opens, track_clicks, :testMode, resent_from, scheduled_email_id, :createdAt, :createdAt
      FROM input
    RETURNING id
  ), ${queuedRowsOfLogs({ tenantId: ':tenantId', runAt: ':runAt', maxAttempts: ':maxAttempts', jobKeyPrefix: ':jobKeyPrefix' })}
  SELECT (SELECT count(*) FROM logs)::int AS inserted`;

/**
 * Writes the sends (see the header) and wakes the send workers once they are committed. Answers false,
 * having written nothing, when the quota reservation would pass the cap.
 */
export async function insertAcceptedSends(sequelize: Sequelize, sends: AcceptedSend[], options: InsertAcceptedOptions, transaction?: Transaction): Promise<boolean> {
  if (sends.length === 0) return true;
  const rows = sends.map(({ request: r, id, messageId }) => ({
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
    track_opens: r.trackOpens ?? options.trackOpens ?? false,
    track_clicks: r.trackClicks ?? options.trackClicks ?? false,
    resent_from: r.resentFrom ?? null,
    scheduled_email_id: r.scheduledEmailId ?? null,
  }));
  const [result] = await sequelize.query<{ inserted: number }>(INSERT_ACCEPTED, {
    type: QueryTypes.SELECT,
    replacements: {
      rows: JSON.stringify(rows),
      tenantId: options.tenantId,
      apiKeyId: options.apiKeyId,
      testMode: options.testMode,
      createdAt: new Date(),
      runAt: options.runAt ?? null,
      maxAttempts: options.maxAttempts,
      jobKeyPrefix: options.jobKeyPrefix,
      cycleStart: options.cycleStart,
      counted: options.counted,
      quotaCap: options.quotaCap,
    },
    transaction,
  });
  if (result.inserted === 0) return false;
  if (!options.runAt) wakeQueue(sequelize, 'send', transaction);
  return true;
}
