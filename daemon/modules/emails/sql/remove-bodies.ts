// Retention of bodies (retention/enforce.ts): a batch of logs past the bodies horizon loses its
// bodies, Liquid data and attachment contents, and is marked. Run with the retention runner's
// replacements (`:batch`, and those of `where`).
/** At most :batch logs matching `where` (SQL on email_logs' columns) whose bodies are still kept. */
export function removeBodiesSql(where: string): string {
  return `UPDATE email_logs SET html_body = NULL, text_body = NULL, data = NULL, bodies_removed_at = now(),
    attachments = (SELECT coalesce(jsonb_agg(a - 'content'), '[]'::jsonb) FROM jsonb_array_elements(attachments) AS a)
  WHERE (id, created_at) IN (SELECT id, created_at FROM email_logs WHERE bodies_removed_at IS NULL AND ${where} LIMIT :batch)
  RETURNING id`;
}
