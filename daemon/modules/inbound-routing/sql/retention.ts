// What the retention task (retention/enforce.ts) deletes with the inbound messages it prunes: their
// stored attachments, found by the message's id and month (the companion's partitions are its months).

/** A CTE deleting the attachments of the messages in `gone` (columns id, created_at). */
export function inboundAttachmentsGoneSql(gone: string): string {
  return `attachments_gone AS (DELETE FROM inbound_attachments a USING ${gone} g
    WHERE a.inbound_id = g.id AND a.created_at = g.created_at)`;
}
