// The retention task's delete of inbound messages (retention/enforce.ts takes each hot table's delete
// from its home): a batch of messages matching `where` (with :batch and the caller's replacements), and
// their stored attachments with them, found by the message's id and month (the companion's partitions
// are its months, and receive.ts writes both with one created_at). Answers one row per message.
export function deleteExpiredInboundMessagesSql(where: string): string {
  return `WITH gone AS (
      DELETE FROM inbound_messages WHERE (id, created_at) IN (SELECT id, created_at FROM inbound_messages WHERE ${where} LIMIT :batch)
      RETURNING id, created_at),
    attachments_gone AS (DELETE FROM inbound_attachments a USING gone g WHERE a.inbound_id = g.id AND a.created_at = g.created_at)
    SELECT id FROM gone`;
}
