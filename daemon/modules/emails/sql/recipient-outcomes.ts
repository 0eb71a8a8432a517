// recipient_outcomes (migration 0390): what each recipient of a send came to — a hard or soft bounce, a
// final non-delivery, a complaint — once per (send, recipient, kind). Written by the one outcome path
// (../outcomes.ts); read by it to settle a send's status and by the sending-risk check (sending-risk.ts);
// aged out with the logs (retention). The table's home (test/sql-homes.test.ts).
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';

/**
 * The row each outcome leaves: a policy refusal counts as a hard bounce toward the pause (it is not
 * suppressed); a final soft bounce (mailbox full, expired in the spool) ends the send for that recipient
 * without counting toward the pause.
 */
export type RecipientOutcomeKind = 'hard_bounce' | 'soft_bounce' | 'undelivered' | 'complaint';

/** Records (send, recipient, kind) once; answers the recipients that were not recorded yet. */
export async function claimRecipientOutcomes(
  sequelize: Sequelize,
  send: { tenantId: string; emailId: string },
  kind: RecipientOutcomeKind,
  recipients: string[],
  transaction: Transaction,
): Promise<string[]> {
  if (recipients.length === 0) return [];
  const rows = await sequelize.query<{ recipient: string }>(
    `INSERT INTO recipient_outcomes (tenant_id, email_id, recipient, kind)
     SELECT :tenantId, :emailId, r, :kind FROM unnest(ARRAY[:recipients]::text[]) AS r
     ON CONFLICT (email_id, recipient, kind) DO NOTHING RETURNING recipient`,
    {
      replacements: { tenantId: send.tenantId, emailId: send.emailId, kind, recipients },
      type: QueryTypes.SELECT,
      transaction,
    },
  );
  const fresh = new Set(rows.map((row) => row.recipient));
  return recipients.filter((recipient) => fresh.has(recipient));
}

/** The recipients of a send that bounced for good, were not delivered or complained, with how. */
export function failedRecipients(
  sequelize: Sequelize,
  emailId: string,
  transaction: Transaction,
): Promise<{ recipient: string; kind: RecipientOutcomeKind }[]> {
  return sequelize.query<{ recipient: string; kind: RecipientOutcomeKind }>(
    `SELECT recipient, kind FROM recipient_outcomes WHERE email_id = :emailId AND kind IN ('hard_bounce', 'undelivered', 'complaint')`,
    { replacements: { emailId }, type: QueryTypes.SELECT, transaction },
  );
}

/**
 * Deletes at most :batch rows matching `where` (retention: they age with the logs), answering one row
 * each. A plain table: a row's ctid is unique, and `ctid = ANY(ARRAY(…))` is a TID scan of the batch
 * (`ctid IN (subquery)` would join against a scan of the whole table for each batch).
 */
export function deleteAgedOutcomesSql(where: string): string {
  return `DELETE FROM recipient_outcomes WHERE ctid = ANY(ARRAY(SELECT ctid FROM recipient_outcomes WHERE ${where} LIMIT :batch)) RETURNING 1 AS id`;
}
