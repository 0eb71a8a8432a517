// Retention of logs (retention/enforce.ts): a batch of logs past the bodies horizon loses its bodies,
// Liquid data and attachment contents, and is marked; a batch past the logs horizon goes, with its tags.
// Run with the retention runner's replacements (`:batch`, and those of `where`).
import { logTagRowsSql } from './insert-logs.ts';

/** At most :batch logs matching `where` (SQL on email_logs' columns) whose bodies are still kept. */
export function removeBodiesSql(where: string): string {
  return `UPDATE email_logs SET html_body = NULL, text_body = NULL, data = NULL, bodies_removed_at = now(),
    attachments = (SELECT coalesce(jsonb_agg(a - 'content'), '[]'::jsonb) FROM jsonb_array_elements(attachments) AS a)
  WHERE (id, created_at) IN (SELECT id, created_at FROM email_logs WHERE bodies_removed_at IS NULL AND ${where} LIMIT :batch)
  RETURNING id`;
}

/**
 * Deletes at most :batch logs matching `where`, answering their ids; a log's tags (MONTHLY_COMPANIONS,
 * db/partitions.ts) go with it, each by its primary key. (id, created_at) is the logs' primary key;
 * ctid would not do (it repeats across partitions).
 */
export function deleteExpiredLogsSql(where: string): string {
  return `WITH gone AS (DELETE FROM email_logs WHERE (id, created_at) IN (SELECT id, created_at FROM email_logs WHERE ${where} LIMIT :batch)
      RETURNING id, tenant_id, tags, created_at),
    tags_gone AS (DELETE FROM email_log_tags t USING (${logTagRowsSql('gone')}) AS g
      WHERE (t.tenant_id, t.tag, t.created_at, t.id) = (g.tenant_id, g.tag, g.created_at, g.id))
    SELECT id FROM gone`;
}
